"""The wire between a table and the floor: MQTT v5 topics, versioned JSON
payloads, the journal-line hash both sides check, and the TLS client identity.

Both programs speak it; neither imports the other.
"""
