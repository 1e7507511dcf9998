package kafka

import (
	"fmt"
	"strconv"
)

// supported names the releases kcheck runs, for messages.
const supported = "2.8.x (on ZooKeeper), 3.3.0 to 3.9.x (KRaft, logging through log4j 1) and 4.0.0 or later (KRaft, log4j2)"

// release is what kcheck must know of a Kafka release to fetch and run it.
type release struct {
	version             string
	major, minor, patch int
	// zooKeeper: the release runs only with ZooKeeper (2.8: KRaft was early
	// access there, KIP-500; production from 3.3, KIP-833).
	zooKeeper bool
	// log4j1: the release logs through log4j 1 (reload4j from 3.1.1) by
	// slf4j; 4.0 moved to log4j2 (KIP-653).
	log4j1 bool
	// producerIDExpiry: the release has producer.id.expiration.ms and
	// producer.id.expiration.check.interval.ms (KIP-854, 3.4.0). Before,
	// transactional.id.expiration.ms expired producer ids too and the check
	// ran every ten minutes, a constant of LogManager.
	producerIDExpiry bool
	// txnVerification: the release has
	// transaction.partition.verification.enable (KIP-890 part 1, 3.6.0),
	// on by default: a leader asks the coordinator whether a transactional
	// producer's partition is in its transaction before the first append.
	txnVerification bool
	// tv2: the release can finalize transaction.version 2 (KIP-890 part
	// 2, 4.0.0), a new 4.x cluster's default.
	tv2 bool
}

// parseRelease returns what kcheck knows of version, or an error naming
// the releases it runs.
func parseRelease(version string) (release, error) {
	m := versionRE.FindStringSubmatch(version)
	if m == nil {
		return release{}, fmt.Errorf("kafka: version %q: want a release such as 4.1.0", version)
	}
	r := release{version: version}
	r.major, _ = strconv.Atoi(m[1])
	r.minor, _ = strconv.Atoi(m[2])
	r.patch, _ = strconv.Atoi(m[3])
	switch {
	case r.major >= 4:
		r.producerIDExpiry, r.txnVerification, r.tv2 = true, true, true
	case r.major == 3 && r.minor >= 3:
		r.log4j1 = true
		r.producerIDExpiry = r.minor >= 4
		r.txnVerification = r.minor >= 6
	case r.major == 2 && r.minor == 8:
		r.log4j1, r.zooKeeper = true, true
	default:
		return release{}, fmt.Errorf("kafka: version %s: kcheck runs Kafka %s", version, supported)
	}
	return r, nil
}

// checkVersion reports whether version is a Kafka release kcheck can run.
func checkVersion(version string) error {
	_, err := parseRelease(version)
	return err
}

// ExpiryCheckable reports whether Kafka version has
// producer.id.expiration.check.interval.ms (KIP-854, 3.4.0), which a
// scenario that needs an idle producer forgotten within seconds sets.
func ExpiryCheckable(version string) bool {
	r, err := parseRelease(version)
	return err == nil && r.producerIDExpiry
}

// TxnVerifiable reports whether Kafka version has
// transaction.partition.verification.enable (KIP-890 part 1, 3.6.0).
func TxnVerifiable(version string) bool {
	r, err := parseRelease(version)
	return err == nil && r.txnVerification
}

// TV2Capable reports whether Kafka version can finalize transaction.version
// 2 (KIP-890 part 2, 4.0.0; the default of a new 4.x cluster).
func TV2Capable(version string) bool {
	r, err := parseRelease(version)
	return err == nil && r.tv2
}
