from tilekit import tuning
