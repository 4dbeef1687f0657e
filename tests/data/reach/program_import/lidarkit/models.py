import spconv.pytorch as spconv
import torch


def build_backbone(channels):
    return spconv.SparseSequential(spconv.SubMConv3d(channels, channels, 3))
