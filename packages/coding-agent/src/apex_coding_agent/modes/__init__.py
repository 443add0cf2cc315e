"""Run modes of the headless agent: print/JSON and RPC, thin adapters over one session runtime."""
