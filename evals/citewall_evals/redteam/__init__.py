"""The red-team gate: cases, the adversarial model, leak rules over member payloads, access
probes."""
