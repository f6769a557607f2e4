"""The package version, in a module of its own so that the row store stamps rows without importing the package."""
__version__ = "0.1.0"
