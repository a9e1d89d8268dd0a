__version__ = "0.47.3"
