package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Builds in --clients (NAME@VERSION, NAME@PATH): bad ones are exit 2 with
// a message naming the flag's value, before any broker starts: an unknown
// NAME, a path that does not exist or is not the client's, and a build that
// fails (a jar that is no kafka-clients: drivers/java/build.sh says so at
// once).
func TestScenariosRunBuildsBadInput(t *testing.T) {
	dir := t.TempDir()
	specs := filepath.Join("..", "..", "spec", "scenarios")
	root := filepath.Join("..", "..")
	notJar := filepath.Join(dir, "not-kafka.jar")
	if err := os.WriteFile(notJar, []byte("PK"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(dir, "none")
	for _, c := range []struct {
		clients string
		want    string
	}{
		{"ours-on,nope@1.0", `--clients: nope@1.0: unknown client "nope" (a build can be made of: java, kgo, sarama, librdkafka, kafkajs, aiokafka, kafka-python)`},
		{"nope", `unknown client "nope" (known: ours-off, ours-on, ours-norearm, java-4.3.1, java-4.4.0, kgo, librdkafka, sarama, aiokafka, kafka-python, kafkajs; or a build, NAME@VERSION or NAME@PATH, of java, kgo, sarama, librdkafka, kafkajs, aiokafka, kafka-python)`},
		{"kgo@" + none, "--clients: kgo@" + none + ": " + none + ": no such file or directory"},
		{"java@latest", `--clients: java@latest: "latest" is neither a version nor a path`},
		{"sarama@" + other, "--clients: sarama@" + other + ": " + other + " is module example.com/other, not github.com/IBM/sarama"},
		{"java@" + notJar, "building java@" + notJar + " (java@" + notJar + "#sha256:"},
		{"java@" + notJar, "not a kafka-clients jar"},
	} {
		code, _, stderr := runKcheck(t, "scenarios", "run", "--dir", specs, "--root", root, "--keep", filepath.Join(dir, "keep"),
			"--cache", filepath.Join(dir, "cache"), "--scenario", "Baseline", "--clients", c.clients)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("--clients %s: exit %d, stderr %q; want exit 2 and %q", c.clients, code, stderr, c.want)
		}
	}
}

// The help says what --clients takes.
func TestScenariosRunBuildsHelp(t *testing.T) {
	code, stdout, _ := runKcheck(t, "scenarios", "run", "--help")
	for _, want := range []string{"or builds of them, NAME@VERSION or NAME@PATH", "java@PATH", "kgo@DIR, sarama@DIR", "librdkafka@DIR",
		"kafkajs@VERSION|PATH", "aiokafka@VERSION|PATH, kafka-python@VERSION|PATH", "kgo@/src/franz-go#sha256:HASH"} {
		if code != exitOK || !strings.Contains(stdout, want) {
			t.Errorf("scenarios run --help: exit %d, no %q", code, want)
		}
	}
}
