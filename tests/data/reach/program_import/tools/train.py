import argparse

from lidarkit.models import build_backbone


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--channels", type=int, default=16)
    print(build_backbone(parser.parse_args().channels))


if __name__ == "__main__":
    main()
