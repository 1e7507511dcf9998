// Package kafka fetches Apache Kafka from Maven Central and runs it locally:
// a KRaft cluster of one or more nodes on 127.0.0.1, each node both broker
// and controller, for kcheck run --bootstrap.
//
// Fetch copies org.apache.kafka:kafka_2.13 and its runtime dependencies,
// plus the log4j2 binding of slf4j, into a cache outside git with mvn, once
// per version. Start writes each node's server.properties, formats its
// storage with Kafka's storage tool, starts "java kafka.Kafka" for each node
// in its own process group, and returns when every node answers a Metadata
// request that lists every node and an InitProducerId request. Stop stops
// exactly those processes and removes their data.
//
// Start and Fetch need java and mvn on PATH; nothing else is downloaded, and
// every socket is bound to 127.0.0.1.
package kafka
