from setuptools import find_packages, setup

setup(name="lidarkit", version="0.1", packages=find_packages(exclude=["tools"]), install_requires=["torch"])
