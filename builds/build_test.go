package builds

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
