//! Static `__device__` globals written and read by symbol: the seed's `devU += devV` example.
