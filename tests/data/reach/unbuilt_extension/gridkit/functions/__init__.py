from .aggregate import aggregate
from .pooling import pooled
