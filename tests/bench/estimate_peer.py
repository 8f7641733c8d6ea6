"""Peer for the start-up benchmark: the estimate arithmetic in Python's standard library.

Run as `python3 -S estimate_peer.py 7000000000 16 4`. It does what `iteragpu estimate` does
(exact bytes, GiB and GB, reserve, total) and prints the same figures, so the two processes
are compared doing the same work.
"""
import sys
from decimal import Decimal, localcontext


def main(parameters, bits, reserve_gib):
    weight_bytes = -(-int(parameters) * int(bits) // 8)  # ceil(parameters * bits / 8)
    with localcontext() as context:
        context.prec = 200  # enough digits for an exact quotient by 2^30 or 10^9
        reserve = Decimal(reserve_gib)
        reserve_bytes = reserve * (1 << 30)
        gib = Decimal(weight_bytes) / (1 << 30)
        gb = Decimal(weight_bytes) / 10**9
        total_bytes = weight_bytes + reserve_bytes
        print(f"weights {weight_bytes} bytes = {gib.normalize():f} GiB = {gb.normalize():f} GB")
        print(f"reserve {reserve_bytes.normalize():f} bytes = {reserve.normalize():f} GiB (assumption)")
        print(f"total {total_bytes.normalize():f} bytes = {(gib + reserve).normalize():f} GiB"
              f" = {(total_bytes / 10**9).normalize():f} GB")


if __name__ == "__main__":
    main(*sys.argv[1:4])
