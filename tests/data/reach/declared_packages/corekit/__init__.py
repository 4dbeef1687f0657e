from corekit.nn import Linear
from corekit.device import memory_report
