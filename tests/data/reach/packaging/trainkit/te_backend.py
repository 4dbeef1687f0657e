import transformer_engine.pytorch as te
