"""Benchmark tooling, apart from the runtime: the seeded workload generator (`workload`, with
the pgoutput wire encoder it writes slot reads with) and `cdcw bench` (`benchmark`), which
measures the pipeline against its physical floor on that workload (docs/benchmarks.md)."""
