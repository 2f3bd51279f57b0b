"""Published measurements as data, and the comparisons behind ``speedtrap validate``."""
