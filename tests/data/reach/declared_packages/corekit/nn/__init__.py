import torch


class Linear(torch.nn.Linear):
    pass
