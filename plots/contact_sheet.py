"""python -m plots.contact_sheet DIR [--out FILE]: every chart PNG of a plots folder tiled into one
image, each under its file name, so that a reviewer sees a whole report's charts at once."""

import argparse
import math
import pathlib
import sys

from . import files


def draw(pngs, out, columns=4, tile_inches=4.0):
    """Tiles `pngs` (sorted as given) into `out`, `columns` to a row; returns how many were placed."""
    from . import common  # matplotlib with the Agg backend
    import matplotlib.image as mpimg

    rows = max(1, math.ceil(len(pngs) / columns))
    fig, axes = common.plt.subplots(
        rows,
        columns,
        figsize=(columns * tile_inches, rows * tile_inches * 0.7),
        squeeze=False,
        layout="constrained",
    )
    for ax in axes.flat:
        ax.axis("off")
    for ax, png in zip(axes.flat, pngs):
        ax.imshow(mpimg.imread(png))
        ax.set_title(png.name, fontsize=7)
    try:
        files.write_atomically(out, lambda f: fig.savefig(f, format="png", dpi=80))
    finally:
        common.plt.close(fig)
    return len(pngs)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m plots.contact_sheet", description=__doc__.splitlines()[0]
    )
    parser.add_argument("folder", help="a folder of chart PNGs (what offloadbench plot wrote)")
    parser.add_argument("--out", help="the sheet (default: <folder>/contact-sheet.png)")
    args = parser.parse_args(argv)
    folder = pathlib.Path(args.folder)
    pngs = sorted(p for p in folder.glob("*.png") if p.name != "contact-sheet.png")
    if not pngs:
        print(f"plots: no chart PNG in {folder}", file=sys.stderr)
        return 2
    out = pathlib.Path(args.out) if args.out else folder / "contact-sheet.png"
    try:
        count = draw(pngs, out)
    except files.OutputError as e:
        print(f"plots: {e}", file=sys.stderr)
        return 1
    print(f"plots: {count} chart(s) on {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
