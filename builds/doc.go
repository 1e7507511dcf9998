// Package builds makes a build of a client the user names, rather than the
// stock drivers' pinned clients: kcheck scenarios run --clients
// java@4.0.0, java@PATH.jar, kgo@DIR, sarama@DIR, librdkafka@VERSION or
// librdkafka@DIR,
// kafkajs@VERSION or kafkajs@PATH, aiokafka@1.2.3 or aiokafka@PATH,
// kafka-python@VERSION or kafka-python@PATH.
//
// Parse reads NAME@SPEC; Resolve makes a path absolute and hashes its
// content (Hash), so that Name names the build exactly (kgo@/src/franz-go
// #sha256:…): matrix.LookupClients does both for --clients, before
// anything runs. Build, which a matrix client's Prepare calls, builds or
// installs it in its own ecosystem's way into the cache, keyed by what was
// given (Key), and returns the command that runs its driver (drivers/),
// before the driver's flags:
//
//   - java: drivers/java/build.sh VERSION (Maven Central) or --jar PATH;
//   - kgo, sarama: go build of the driver with a go.mod replace of the
//     client's module by DIR, in a copy of kcheck's go.mod (go build
//     -modfile), never kcheck's own;
//   - librdkafka: a VERSION is confluent-kafka==VERSION from PyPI, whose
//     wheel bundles that librdkafka; a DIR, confluent-kafka built from source (PyPI's sdist, pip
//     install --no-binary) against DIR's headers and library, in a
//     virtualenv of its own;
//   - kafkajs: npm install of the version or PATH in a directory of its own;
//   - aiokafka, kafka-python: pip install of the version or PATH in a
//     virtualenv of its own.
//
// A build is in its stock client's family (Base): the spec's predictions
// for the stock client are its predictions.
package builds
