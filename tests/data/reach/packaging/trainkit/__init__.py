from .core import train
