"""The torch adapter's targets (torch_adapter.py is the program that serves them), one module per
family: context (dtype, device and what every target shares), sparse_ops, algebra (gspmm, gsddmm,
segment ops), layers (PyTorch Geometric) and relational (typed graphs)."""

import os
import sys

# The modules import the adapter kit (gnncheck_adapter.py) that sits beside this package.
_KIT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _KIT_DIR not in sys.path:
    sys.path.insert(0, _KIT_DIR)
