"""The benchmarks' nearest-rank percentile."""

from bench.durable import percentile


def test_the_p99_of_a_hundred_values_is_the_99th_and_of_ten_the_largest() -> None:
    hundred = [float(n) for n in range(100, 0, -1)]
    assert (percentile(hundred, 0.99), percentile(hundred, 0.95), percentile(hundred, 0.5)) == (
        99.0, 95.0, 50.0,
    )  # fmt: skip
    assert percentile([float(n) for n in range(1, 11)], 0.99) == 10.0
    assert percentile([3.0], 0.99) == 3.0
