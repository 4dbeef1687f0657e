class Config:
    attention_backend = 'triton'
