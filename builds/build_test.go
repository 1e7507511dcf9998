package builds

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"
)

// testEnv is an Env on the repository this test runs in, with a cache of
// its own and the tools' output in the test's log.
func testEnv(t *testing.T) Env {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return Env{Root: root, Cache: t.TempDir(), Log: logWriter{t}}
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func build(t *testing.T, env Env, given string) []string {
	t.Helper()
	s, err := mustParse(t, given).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	argv, err := Build(context.Background(), env, s)
	if err != nil {
		t.Fatalf("%s: %v", given, err)
	}
	return argv
}

// summary is the part of a driver's JSON summary (drivers/OUTCOMES.md) a
// test reads.
type summary struct {
	Client   string `json:"client"`
	Version  string `json:"version"`
	Sent     int    `json:"sent"`
	Acked    int    `json:"acked"`
	ReadBack int    `json:"read_back"`
}

// runOnKfake runs a built driver's command with a small workload (40
// records on 2 partitions, one a batch) against an in-process kfake
// cluster emulating Kafka 4.1, and returns its summary: the build, run as a
// cell runs it, minus the proxy and a real broker.
func runOnKfake(t *testing.T, argv []string) summary {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(kversion.V4_1_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append(argv[1:], "--bootstrap", strings.Join(c.ListenAddrs(), ","), "--topic", "builds-test",
		"--partitions", "2", "--records", "40", "--value-bytes", "100", "--keys", "16", "--compression", "gzip",
		"--batch-records", "one", "--delivery-timeout-ms", "30000", "--request-timeout-ms", "10000")
	cmd := exec.CommandContext(ctx, argv[0], args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\nstdout: %s\nstderr: %s", argv, err, stdout.String(), lastLines(stderr.String(), 30))
	}
	var s summary
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Fatalf("the driver's summary: %v\n%s", err, stdout.String())
	}
	if s.Sent != 40 || s.Acked != 40 || s.ReadBack != 40 {
		t.Errorf("summary %+v: want 40 sent, acknowledged and read back", s)
	}
	return s
}

// goCheckout copies module@version as the Go module cache holds it (go mod
// download: kcheck's own versions are there already) to a new directory,
// a checkout to build.
func goCheckout(t *testing.T, module, version string) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", module+"@"+version).Output()
	if err != nil {
		t.Fatalf("go mod download %s@%s: %v", module, version, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download: %s (%v)", out, err)
	}
	dir := filepath.Join(t.TempDir(), filepath.Base(module))
	if err := copyTree(m.Dir, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBuildGo builds kgo@DIR and sarama@DIR from copies of franz-go
// v1.22.3 and sarama v1.61.1 (kcheck's own versions), checks that each
// binary was built from DIR (its build information names the
// replacement) and that kcheck's go.mod is untouched, and runs each
// against kfake. Then a kgo checkout that does not build is go build's
// error.
func TestBuildGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kgo and sarama drivers (a minute each on two cores)")
	}
	env := testEnv(t)
	mod := readFiles(t, filepath.Join(env.Root, "go.mod"), filepath.Join(env.Root, "go.sum"))
	var kgoDir string
	for _, c := range []struct{ client, module, version string }{
		{"kgo", "github.com/twmb/franz-go", "v1.22.3"},
		{"sarama", "github.com/IBM/sarama", "v1.61.1"},
	} {
		dir := goCheckout(t, c.module, c.version)
		s, err := mustParse(t, c.client+"@"+dir).Resolve()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		argv, err := Build(context.Background(), env, s)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("built %s in %.0f s: %v", s.Name(), time.Since(start).Seconds(), argv)
		if want := filepath.Join(env.Cache, "builds", s.Key(), "kcheck-"+c.client+"-driver"); len(argv) != 1 || argv[0] != want {
			t.Errorf("argv %v, want [%s]", argv, want)
		}
		info, err := exec.Command("go", "version", "-m", argv[0]).Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(info), "=>\t"+dir+"\t") {
			t.Errorf("go version -m %s names no replacement by %s:\n%s", argv[0], dir, info)
		}
		if now := readFiles(t, filepath.Join(env.Root, "go.mod"), filepath.Join(env.Root, "go.sum")); now != mod {
			t.Error("kcheck's go.mod or go.sum changed")
		}
		if got := runOnKfake(t, argv); got.Client != c.client {
			t.Errorf("client %q, want %s", got.Client, c.client)
		}
		if c.client == "kgo" {
			kgoDir = dir
		}
	}
	// A checkout that does not build: go build's own words.
	bad := filepath.Join(kgoDir, "pkg", "kgo", "kcheck_broken.go")
	if err := os.WriteFile(bad, []byte("package kgo\n\nvar _ int = \"not an int\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := mustParse(t, "kgo@"+kgoDir).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), env, s)
	if err == nil || !strings.Contains(err.Error(), "go build ./drivers/kgo with replace github.com/twmb/franz-go => "+kgoDir) ||
		!strings.Contains(err.Error(), "kcheck_broken.go:3") {
		t.Errorf("a checkout that does not build: %v; want go build's error naming kcheck_broken.go:3", err)
	}
}

// TestBuildJavaJar builds java@PATH from a copy of the kafka-clients 4.3.1
// jar in ~/.m2 (where Maven put it when building the stock driver) and runs
// the driver: the JVM loads KafkaProducer from the copy of that jar beside
// the driver's, which holds no Kafka class of its own. (It does not run a
// workload: the Java client's admin cannot create a topic on kfake.) Then
// a jar the driver does not compile against is exit 2 with javac's error.
func TestBuildJavaJar(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Java driver with mvn (half a minute)")
	}
	for _, tool := range []string{"mvn", "java", "jar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: the Java driver cannot be built here", tool)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	stock := filepath.Join(home, ".m2", "repository", "org", "apache", "kafka", "kafka-clients", "4.3.1", "kafka-clients-4.3.1.jar")
	if _, err := os.Stat(stock); err != nil {
		t.Skipf("no kafka-clients 4.3.1 in ~/.m2 (drivers/java/build.sh 4.3.1 puts it there): %v", err)
	}
	jar := filepath.Join(t.TempDir(), "kafka-clients-local.jar")
	rewriteJar(t, stock, jar, func(_ string, body []byte) ([]byte, bool) { return body, true })
	s, err := mustParse(t, "java@"+jar).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	env := testEnv(t)
	argv, err := Build(context.Background(), env, s)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(env.Cache, "java-driver-jar-"+s.Hash+"-")
	if len(argv) != 3 || argv[0] != "java" || argv[1] != "-jar" || !strings.HasPrefix(argv[2], dir) {
		t.Fatalf("argv %v: want java -jar of a jar in the cache named for %s", argv, s.Hash)
	}
	beside := filepath.Join(filepath.Dir(argv[2]), "kafka-clients.jar")
	if h, err := Hash(beside); err != nil || h != s.Hash {
		t.Errorf("%s: hash %s (%v), want the given jar's, %s", beside, h, err, s.Hash)
	}
	if n := jarEntries(t, argv[2], "org/apache/kafka/"); n != 0 {
		t.Errorf("the driver's jar holds %d Kafka classes: want none, the given jar's only", n)
	}
	cmd := exec.Command("java", "-Xlog:class+load=info", "-jar", argv[2])
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "--bootstrap is required") {
		t.Errorf("the driver with no flags: %v, stderr %q; want exit 2 and --bootstrap is required", err, stderr.String())
	}
	if want := "org.apache.kafka.clients.producer.KafkaProducer source: file:" + beside; !strings.Contains(stdout.String(), want) {
		t.Errorf("the JVM's class loading names no %q", want)
	}
	// Built once: the same jar again is the cache's.
	again, err := Build(context.Background(), env, s)
	if err != nil || again[2] != argv[2] {
		t.Errorf("again: %v, %v; want %s", again, err, argv[2])
	}

	// Only the producer: Main.java does not compile against it.
	thin := filepath.Join(t.TempDir(), "thin.jar")
	rewriteJar(t, stock, thin, func(name string, body []byte) ([]byte, bool) {
		return body, name == "org/apache/kafka/clients/producer/KafkaProducer.class"
	})
	s, err = mustParse(t, "java@"+thin).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), env, s)
	if err == nil || !strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "the driver does not compile against the local jar "+thin) ||
		!strings.Contains(err.Error(), "cannot find symbol") {
		t.Errorf("a jar the driver does not compile against: %v", err)
	}
}

// TestBuildJavaVersion builds java@4.1.0, a version the stock clients do
// not run (its kafka-clients is in ~/.m2 where Kafka 4.1.0's fetch put it;
// with KCHECK_REGISTRY=1 Maven may fetch it): the jar is the cache's, named
// for the version, and holds kafka-clients 4.1.0.
func TestBuildJavaVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Java driver with mvn (half a minute)")
	}
	for _, tool := range []string{"mvn", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: the Java driver cannot be built here", tool)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	m2 := filepath.Join(home, ".m2", "repository", "org", "apache", "kafka", "kafka-clients", "4.1.0", "kafka-clients-4.1.0.jar")
	if _, err := os.Stat(m2); err != nil && os.Getenv("KCHECK_REGISTRY") != "1" {
		t.Skipf("no kafka-clients 4.1.0 in ~/.m2, and KCHECK_REGISTRY=1 is not set to let Maven fetch it: %v", err)
	}
	env := testEnv(t)
	argv := build(t, env, "java@4.1.0")
	if len(argv) != 3 || !strings.HasPrefix(argv[2], filepath.Join(env.Cache, "java-driver-4.1.0-")) {
		t.Fatalf("argv %v: want java -jar of a jar in the cache named for 4.1.0", argv)
	}
	if v := jarFile(t, argv[2], "kafka/kafka-version.properties"); !strings.Contains(v+"\n", "\nversion=4.1.0\n") {
		t.Errorf("the jar's kafka/kafka-version.properties: %q, want version=4.1.0", v)
	}
}

// jarFile returns the entry name of the jar at path.
func jarFile(t *testing.T, path, name string) string {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := r.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rewriteJar copies the jar src to dst through keep, which may change an
// entry's body or leave it out.
func rewriteJar(t *testing.T, src, dst string, keep func(name string, body []byte) ([]byte, bool)) {
	t.Helper()
	r, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	w := zip.NewWriter(f)
	for _, e := range r.File {
		rc, err := e.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		body, ok := keep(e.Name, body)
		if !ok {
			continue
		}
		ew, err := w.Create(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ew.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFiles(t *testing.T, paths ...string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range paths {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(body)
	}
	return b.String()
}

// jarEntries counts the entries of a jar under prefix.
func jarEntries(t *testing.T, path, prefix string) int {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for _, e := range r.File {
		if strings.HasPrefix(e.Name, prefix) {
			n++
		}
	}
	return n
}
