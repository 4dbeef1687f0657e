from setuptools import setup

setup(name="fftkit", version="0.1", packages=["fftkit"], install_requires=["torch"])
