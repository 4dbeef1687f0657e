from .functions import aggregate, pooled
