"""deja-blame: which AI agent session wrote this line, and why?"""

__version__ = "0.1.0"
