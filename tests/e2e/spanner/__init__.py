"""The Spanner family's scenario, its independent oracle, and the modules that check the
warehouse against them."""
