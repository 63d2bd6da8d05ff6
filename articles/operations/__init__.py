"""Operations: the audit and repairs, backup, replication, the embedded Redis, health, metrics."""
