//! A small hand-written argument parser. The binary adds no dependencies to the crate, and the
//! grammar it needs is tiny: `--flag value`, `--flag=value`, boolean `--flag`, and
//! comma-separated lists for sweep parameters.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;

/// A mistake in the command line: reported with a hint to `--help` and exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Shorthand for building a usage error from a format string.
macro_rules! usage {
    ($($t:tt)*) => { $crate::args::UsageError(format!($($t)*)) };
}
pub(crate) use usage;

/// One flag as written: its name (with the dashes) and the value given inline after `=`, if any.
#[derive(Debug)]
pub struct Flag {
    pub name: String,
    inline: Option<String>,
}

/// The command-line tokens that remain after the program name (and, later, the subcommand).
pub struct Args {
    tokens: VecDeque<String>,
}

impl Args {
    /// Converts OS arguments to UTF-8 up front, so a bad byte is a usage error and not a panic
    /// (`std::env::args` would panic on it).
    pub fn from_os(args: impl IntoIterator<Item = OsString>) -> Result<Self, UsageError> {
        let tokens = args
            .into_iter()
            .map(|a| a.into_string().map_err(|a| usage!("argument {a:?} is not valid UTF-8")))
            .collect::<Result<_, _>>()?;
        Ok(Args { tokens })
    }

    /// The remaining tokens, for a subcommand with its own parser.
    pub fn into_rest(self) -> Vec<String> {
        self.tokens.into()
    }

    /// The next token if it is not a flag (a subcommand name).
    pub fn next_word(&mut self) -> Option<String> {
        match self.tokens.front() {
            Some(t) if !t.starts_with('-') => self.tokens.pop_front(),
            _ => None,
        }
    }

    /// The next flag, or `None` at the end. Anything that is not a flag here is an error: no
    /// subcommand takes positional arguments.
    pub fn next_flag(&mut self) -> Result<Option<Flag>, UsageError> {
        let Some(tok) = self.tokens.pop_front() else {
            return Ok(None);
        };
        if tok == "-h" {
            return Ok(Some(Flag { name: "--help".into(), inline: None }));
        }
        if !tok.starts_with("--") || tok.len() == 2 {
            return Err(usage!("unexpected argument '{tok}' (flags look like --name value)"));
        }
        Ok(Some(match tok.split_once('=') {
            Some((name, value)) => Flag { name: name.to_string(), inline: Some(value.to_string()) },
            None => Flag { name: tok, inline: None },
        }))
    }

    /// The value of a flag that takes one: the inline `=value`, else the next token. A following
    /// `--flag` is not taken as a value, so `--n --N 8` reports the missing value of `--n`.
    pub fn value(&mut self, flag: &mut Flag) -> Result<String, UsageError> {
        if let Some(v) = flag.inline.take() {
            return Ok(v);
        }
        match self.tokens.front() {
            Some(t) if !t.starts_with("--") => Ok(self.tokens.pop_front().unwrap_or_default()),
            _ => Err(usage!("{} needs a value", flag.name)),
        }
    }

    /// Rejects `--flag=value` on a boolean flag instead of silently ignoring the value.
    pub fn no_value(&self, flag: &Flag) -> Result<(), UsageError> {
        match &flag.inline {
            Some(v) => Err(usage!("{} takes no value (got '{v}')", flag.name)),
            None => Ok(()),
        }
    }
}

/// An integer ≥ `min`, with an error message naming the flag.
pub fn parse_uint(flag: &str, text: &str, min: usize) -> Result<usize, UsageError> {
    let v: usize =
        text.trim().parse().map_err(|_| usage!("invalid value '{text}' for {flag}: expected an integer ≥ {min}"))?;
    if v < min {
        return Err(usage!("invalid value '{text}' for {flag}: must be at least {min}"));
    }
    Ok(v)
}

/// A comma-separated list (a sweep), each item parsed by `item`. Empty items (`8,,16`) are errors.
pub fn parse_list<T>(
    flag: &str,
    text: &str,
    item: impl Fn(&str) -> Result<T, UsageError>,
) -> Result<Vec<T>, UsageError> {
    text.split(',')
        .map(|s| {
            let s = s.trim();
            if s.is_empty() {
                Err(usage!("empty item in the list '{text}' given to {flag}"))
            } else {
                item(s)
            }
        })
        .collect()
}

/// One of a fixed set of names, with the allowed names in the error.
pub fn parse_choice<T: Copy>(flag: &str, text: &str, choices: &[(&str, T)]) -> Result<T, UsageError> {
    choices.iter().find(|(name, _)| name.eq_ignore_ascii_case(text)).map(|&(_, v)| v).ok_or_else(|| {
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        usage!("invalid value '{text}' for {flag}: expected one of {}", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Args {
        Args::from_os(v.iter().map(OsString::from)).unwrap()
    }

    #[test]
    fn flags_and_values() {
        let mut a = args(&["--n", "8", "--N=16", "--json"]);
        let mut f = a.next_flag().unwrap().unwrap();
        assert_eq!(f.name, "--n");
        assert_eq!(a.value(&mut f).unwrap(), "8");
        let mut f = a.next_flag().unwrap().unwrap();
        assert_eq!(f.name, "--N");
        assert_eq!(a.value(&mut f).unwrap(), "16");
        let f = a.next_flag().unwrap().unwrap();
        assert!(a.no_value(&f).is_ok());
        assert!(a.next_flag().unwrap().is_none());
    }

    #[test]
    fn missing_value_and_lists() {
        let mut a = args(&["--n", "--N", "3"]);
        let mut f = a.next_flag().unwrap().unwrap();
        assert!(a.value(&mut f).is_err());
        assert_eq!(parse_list("--n", "8, 16", |s| parse_uint("--n", s, 1)).unwrap(), vec![8, 16]);
        assert!(parse_list("--n", "8,,16", |s| parse_uint("--n", s, 1)).is_err());
        assert!(parse_uint("--n", "0", 1).is_err());
        assert!(parse_uint("--n", "-3", 1).is_err());
    }
}
