"""Differential suite: agent_explorer.engine against XState v5 in Node (see README.md)."""
