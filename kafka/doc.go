// Package kafka fetches Apache Kafka from Maven Central and runs it locally:
// a cluster of one or more nodes on 127.0.0.1, each node both broker and
// KRaft controller, for kcheck run --bootstrap. Releases 4.0 and later and
// 3.3 to 3.9 run in KRaft mode; 2.8 runs its brokers on one ZooKeeper
// server, started first (docs/brokers.md).
//
// Fetch copies org.apache.kafka:kafka_2.13 and its runtime dependencies,
// plus the binding of slf4j to the release's logging (log4j2 from 4.0,
// reload4j or log4j 1 before), into a cache outside git with mvn, once per
// version. Start writes each node's server.properties, formats its storage
// with Kafka's storage tool (KRaft) or starts ZooKeeper, starts "java
// kafka.Kafka" for each node in its own process group, and returns when
// every node answers a Metadata request that lists every node and an
// InitProducerId request. Stop stops exactly those processes and removes
// their data.
//
// Start and Fetch need java and mvn on PATH; nothing else is downloaded, and
// every socket is bound to 127.0.0.1.
package kafka
