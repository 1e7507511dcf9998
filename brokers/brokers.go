// Package brokers names the Kafka-compatible brokers kcheck runs scenarios
// on, Apache Kafka's releases (started by kafka/) and the others, and
// starts the others on 127.0.0.1: kfake in this process, tansu built from
// crates.io into the cache (tansu.go). crabka cannot be had (CrabkaRefused).
package brokers

import (
	"fmt"
	"strings"
)

// Kind is a broker implementation.
type Kind string

const (
	Kafka  Kind = "kafka"  // Apache Kafka, from Maven Central (kafka/)
	Kfake  Kind = "kfake"  // franz-go's kfake, in this process
	Tansu  Kind = "tansu"  // tansu, from crates.io (cargo install)
	Crabka Kind = "crabka" // crabka-broker, from crates.io: not installable (CrabkaRefused)
)

// Spec is one broker: its kind and version.
type Spec struct {
	Kind    Kind
	Version string
}

// DefaultKfake is the Kafka version kfake emulates when none is named.
const DefaultKfake = "4.1"

// Parse reads a broker as --brokers names it: a Kafka version ("4.1.0", or
// "kafka-4.1.0"), "kfake" or "kfake-V" (the Kafka version it emulates),
// "tansu" or "tansu-0.6.0", "crabka".
func Parse(s string) (Spec, error) {
	kind, v, _ := strings.Cut(s, "-")
	switch Kind(kind) {
	case Kafka:
		if v == "" {
			return Spec{}, fmt.Errorf("broker %q: kafka-VERSION names an Apache Kafka release, e.g. kafka-4.1.0", s)
		}
		return Spec{Kafka, v}, nil
	case Kfake:
		if v == "" {
			v = DefaultKfake
		}
		return Spec{Kfake, v}, nil
	case Tansu:
		if v == "" {
			v = TansuVersion
		}
		if v != TansuVersion {
			return Spec{}, fmt.Errorf("broker %q: kcheck builds tansu %s (pinned, with its Cargo.lock); other versions are not supported", s, TansuVersion)
		}
		return Spec{Tansu, v}, nil
	case Crabka:
		return Spec{Crabka, v}, nil
	}
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		return Spec{Kafka, s}, nil
	}
	return Spec{}, fmt.Errorf("broker %q: want a Kafka version (4.1.0, kafka-4.1.0), kfake[-V], tansu[-%s] or crabka", s, TansuVersion)
}

// Name is how the matrix names the broker in its cells and tables: a Kafka
// release by its version alone, as it always has, the others KIND-VERSION.
func (s Spec) Name() string {
	if s.Kind == Kafka {
		return s.Version
	}
	if s.Version == "" {
		return string(s.Kind)
	}
	return string(s.Kind) + "-" + s.Version
}

// String is the broker in words: "Kafka 4.1.0", "tansu 0.6.0".
func (s Spec) String() string {
	if s.Kind == Kafka {
		return "Kafka " + s.Version
	}
	return strings.TrimSpace(string(s.Kind) + " " + s.Version)
}

// CrabkaRefused is why crabka cannot be run here, in the registry's words: every
// crabka-broker release with a broker in it is yanked from crates.io, and
// the one left is an empty library (its successor, krabka-broker, is not
// on crates.io).
const CrabkaRefused = "crabka-broker cannot be installed from crates.io: `cargo install crabka-broker --version 0.3.8 --locked` " +
	"answers \"cannot install package `crabka-broker`, it has been yanked from registry `crates-io`\" (so are 0.3.0 to 0.3.7), " +
	"and 0.3.9, the only release not yanked, \"has no binaries\" (an empty library pointing to krabka-broker, which crates.io does not have)"
