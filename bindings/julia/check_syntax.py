"""Syntax check of Julia files without Julia, with the tree-sitter Julia grammar from PyPI
(`pip install tree-sitter tree-sitter-julia`).

    python3 bindings/julia/check_syntax.py [FILE.jl ...]    (default: BTChol.jl beside this file)

Exit status: 0 when every file parses without an ERROR or MISSING node, 1 when one does (each is
printed with its line and column), 2 when tree-sitter is not installed. This finds syntax errors
(unbalanced blocks, bad operators, malformed calls), not undefined names or type errors: only
Julia itself can check those.
"""

import os
import sys


def problems(tree):
    out, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            row, col = node.start_point
            what = f"missing {node.type}" if node.is_missing else "syntax error"
            out.append((row + 1, col + 1, what))
        elif node.has_error:
            stack.extend(node.children)
    return sorted(out)


def main(paths):
    try:
        import tree_sitter
        import tree_sitter_julia
    except ImportError as e:
        print(f"julia syntax check: skipped, tree-sitter is not installed ({e})")
        return 2
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_julia.language()))
    bad = 0
    for path in paths:
        with open(path, "rb") as f:
            source = f.read()
        found = problems(parser.parse(source))
        lines = source.decode("utf-8", "replace").splitlines()
        for row, col, what in found:
            text = lines[row - 1].strip() if row <= len(lines) else ""
            print(f"{path}:{row}:{col}: {what}: {text}")
        print(f"{path}: {'OK' if not found else f'{len(found)} problem(s)'}")
        bad += bool(found)
    return 1 if bad else 0


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.exit(main(sys.argv[1:] or [os.path.join(here, "BTChol.jl")]))
