package builds

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLibrdkafkaLayout(t *testing.T) {
	d := t.TempDir()
	src := filepath.Join(d, "tree")
	write(t, filepath.Join(src, "src", "rdkafka.h"), "#define RD_KAFKA_VERSION  0x020f01ff\n", 0o644)
	write(t, filepath.Join(src, "src", "rdkafka_mock.h"), "", 0o644)
	write(t, filepath.Join(src, "src", "librdkafka.so.1"), "elf", 0o755)
	if err := os.Symlink("librdkafka.so.1", filepath.Join(src, "src", "librdkafka.so")); err != nil {
		t.Fatal(err)
	}
	h, l, err := librdkafkaLayout(src)
	if err != nil || len(h) != 2 || len(l) != 2 {
		t.Errorf("a source tree: headers %v, libraries %v, %v", h, l, err)
	}
	prefix := filepath.Join(d, "prefix")
	write(t, filepath.Join(prefix, "include", "librdkafka", "rdkafka.h"), "#define RD_KAFKA_VERSION 0x021000ff\n", 0o644)
	write(t, filepath.Join(prefix, "lib", "librdkafka.so.1"), "elf", 0o755)
	if h, l, err := librdkafkaLayout(prefix); err != nil || len(h) != 1 || len(l) != 1 {
		t.Errorf("an install prefix: headers %v, libraries %v, %v", h, l, err)
	}
	unbuilt := filepath.Join(d, "unbuilt")
	write(t, filepath.Join(unbuilt, "src", "rdkafka.h"), "", 0o644)
	for dir, want := range map[string]string{
		unbuilt: "has no librdkafka.so: build it first (./configure && make)",
		d:       "is neither a librdkafka build",
	} {
		if _, _, err := librdkafkaLayout(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", dir, err, want)
		}
	}
	for path, want := range map[string]uint32{
		filepath.Join(src, "src", "rdkafka.h"):                      0x020f01ff,
		filepath.Join(prefix, "include", "librdkafka", "rdkafka.h"): 0x021000ff,
	} {
		if v, err := rdkafkaVersion(path); err != nil || v != want {
			t.Errorf("rdkafkaVersion(%s) = %#x, %v; want %#x", path, v, err, want)
		}
	}
	if _, err := rdkafkaVersion(filepath.Join(unbuilt, "src", "rdkafka.h")); err == nil {
		t.Error("an rdkafka.h without RD_KAFKA_VERSION: no error")
	}
}

func TestConfluentKafkaFor(t *testing.T) {
	for v, want := range map[uint32]string{
		0x021000ff: "confluent-kafka==2.16.1", // 2.16.0
		0x021100ff: "confluent-kafka==2.16.1", // a later one: the driver's own
		0x020f01ff: "confluent-kafka~=2.15.0", // 2.15.1: the newest 2.15
		0x010902ff: "confluent-kafka~=1.9.0",
	} {
		if got := confluentKafkaFor(v); got != want {
			t.Errorf("confluentKafkaFor(%#x) = %s, want %s", v, got, want)
		}
	}
}

// TestBuildLibrdkafka builds librdkafka@$KCHECK_LIBRDKAFKA (a librdkafka
// build: ./configure && make, minutes, so no test makes one) with
// KCHECK_REGISTRY=1 (confluent-kafka's sdist comes from PyPI), and runs the
// driver against kfake: it reports the version of the librdkafka given.
func TestBuildLibrdkafka(t *testing.T) {
	dir := os.Getenv("KCHECK_LIBRDKAFKA")
	if dir == "" {
		t.Skip("set KCHECK_LIBRDKAFKA to a librdkafka build (src/ after ./configure && make, or an install prefix)")
	}
	needTools(t, python())
	s, err := mustParse(t, "librdkafka@"+dir).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	headers, _, err := librdkafkaLayout(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	var v uint32
	for _, h := range headers {
		if filepath.Base(h) == "rdkafka.h" {
			v, _ = rdkafkaVersion(h)
		}
	}
	argv, err := Build(context.Background(), testEnv(t), s)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d.%d.%d", v>>24, (v>>16)&0xff, (v>>8)&0xff)
	if got := runOnKfake(t, argv); got.Client != "librdkafka" || got.Version != want {
		t.Errorf("ran as %s %s, want librdkafka %s", got.Client, got.Version, want)
	}
}
