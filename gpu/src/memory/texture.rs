//! Texture memory: a lookup through the texture path or, where unreachable, the read-only data cache.
