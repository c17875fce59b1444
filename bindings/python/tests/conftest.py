import os
import sys

# Import the package from this checkout (bindings/python), installed or not.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
