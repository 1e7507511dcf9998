package kafka

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"4.0.0", "4.1.0", "4.3.1", "10.0.0", "4.2.0-rc1", "3.9.1", "3.5.2", "3.3.0", "2.8.2"} {
		if err := checkVersion(v); err != nil {
			t.Errorf("checkVersion(%q): %v", v, err)
		}
	}
	for _, v := range []string{"", "4.1", "3.2.3", "3.0.0", "2.7.2", "2.9.0", "1.1.1", "latest", "4.1.0/../x", "4.1.0 ", "<4.1.0>"} {
		if err := checkVersion(v); err == nil {
			t.Errorf("checkVersion(%q): no error", v)
		}
	}
}

func TestParseRelease(t *testing.T) {
	for _, tc := range []struct {
		version                             string
		zooKeeper, log4j1, producerIDExpiry bool
	}{
		{"4.1.0", false, false, true},
		{"3.9.1", false, true, true},
		{"3.4.0", false, true, true},
		{"3.3.2", false, true, false},
		{"2.8.2", true, true, false},
	} {
		r := mustRelease(t, tc.version)
		if r.zooKeeper != tc.zooKeeper || r.log4j1 != tc.log4j1 || r.producerIDExpiry != tc.producerIDExpiry {
			t.Errorf("%s: %+v, want zooKeeper %v, log4j1 %v, producerIDExpiry %v", tc.version, r, tc.zooKeeper, tc.log4j1, tc.producerIDExpiry)
		}
	}
}

// mustRelease is parseRelease, for a version it must know.
func mustRelease(t *testing.T, version string) release {
	t.Helper()
	r, err := parseRelease(version)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReload4jBinding(t *testing.T) {
	for v, want := range map[string]bool{"1.7.36": true, "1.7.34": true, "1.7.33": false, "1.7.30": false, "1.6.1": false, "2.0.9": true} {
		if got := reload4jBinding(v); got != want {
			t.Errorf("reload4jBinding(%q) = %v, want %v", v, got, want)
		}
	}
}

// writeComplete makes dir look like a complete fetch of the jars.
func writeComplete(t *testing.T, dir string, jars ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "libs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, j := range jars {
		if err := os.WriteFile(filepath.Join(dir, "libs", j), []byte("PK"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, completeFile), []byte(strings.Join(jars, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeTool writes an executable shell script name into a new directory and
// puts that directory first in PATH.
func fakeTool(t *testing.T, name, script string) string {
	t.Helper()
	bin := t.TempDir()
	path := filepath.Join(bin, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return path
}

func TestFetchReusesCompleteCache(t *testing.T) {
	cache := t.TempDir()
	writeComplete(t, filepath.Join(cache, "kafka-4.1.0"), "kafka_2.13-4.1.0.jar", "kafka-clients-4.1.0.jar")
	t.Setenv("PATH", t.TempDir()) // no mvn: a complete cache must not need it
	cp, err := Fetch(context.Background(), "4.1.0", cache)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "kafka-4.1.0", "libs", "*"); cp != want {
		t.Errorf("classpath %q, want %q", cp, want)
	}
	if !Fetched("4.1.0", cache) {
		t.Error("Fetched: false for a complete cache")
	}
}

func TestFetchIncompleteCacheNeedsMaven(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Join(cache, "kafka-4.1.0")
	writeComplete(t, dir, "kafka_2.13-4.1.0.jar", "gone.jar")
	os.Remove(filepath.Join(dir, "libs", "gone.jar"))
	if Fetched("4.1.0", cache) {
		t.Fatal("Fetched: true with a jar missing")
	}
	t.Setenv("PATH", t.TempDir())
	_, err := Fetch(context.Background(), "4.1.0", cache)
	if !errors.Is(err, ErrNoMaven) {
		t.Fatalf("Fetch without mvn: %v, want ErrNoMaven", err)
	}
	if !strings.Contains(err.Error(), "install Maven") {
		t.Errorf("error gives no remedy: %v", err)
	}
}

func TestFetchMavenRefuses(t *testing.T) {
	t.Setenv("JAVA_HOME", "/usr/lib/jvm/any") // mvn here is a script: java is not needed
	fakeTool(t, "mvn", `printf '\033[0m[ERROR] Failed to execute goal on project kafka-fetch: Could not resolve dependencies: org.apache.kafka:kafka_2.13:jar:9.9.9 was not found in https://repo.maven.apache.org/maven2\n'
printf '[ERROR] \n[ERROR] Re-run Maven using the -X switch to enable full debug logging.\n'
exit 1
`)
	cache := t.TempDir()
	_, err := Fetch(context.Background(), "9.9.9", cache)
	if !errors.Is(err, ErrMaven) {
		t.Fatalf("Fetch: %v, want ErrMaven", err)
	}
	msg := err.Error()
	for _, want := range []string{"org.apache.kafka:kafka_2.13:9.9.9", "command: ", "dependency:copy-dependencies", "was not found in https://repo.maven.apache.org"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	for _, unwanted := range []string{"\x1b[", "Re-run Maven"} {
		if strings.Contains(msg, unwanted) {
			t.Errorf("error holds %q:\n%s", unwanted, msg)
		}
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("a failed fetch left %v in the cache", entries)
	}
}

func TestFetchCopiesWithMaven(t *testing.T) {
	t.Setenv("JAVA_HOME", "/usr/lib/jvm/any")
	// A fake mvn: copy-dependencies writes the server's jars, copy the binding.
	fakeTool(t, "mvn", `for a in "$@"; do
  case "$a" in
  -DoutputDirectory=*) out=${a#-DoutputDirectory=} ;;
  -Dartifact=*) art=${a#-Dartifact=} ;;
  esac
done
mkdir -p "$out"
if [ -n "$art" ]; then echo "$art" > "$out/binding.jar"; exit 0; fi
for j in kafka_2.13-4.3.1.jar log4j-core-2.25.4.jar slf4j-api-1.7.36.jar; do echo x > "$out/$j"; done
`)
	cache := t.TempDir()
	cp, err := Fetch(context.Background(), "4.3.1", cache)
	if err != nil {
		t.Fatal(err)
	}
	libs := strings.TrimSuffix(cp, "*")
	b, err := os.ReadFile(filepath.Join(libs, "binding.jar"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(b)), "org.apache.logging.log4j:log4j-slf4j-impl:2.25.4"; got != want {
		t.Errorf("binding %q, want %q", got, want)
	}
	if !Fetched("4.3.1", cache) {
		t.Error("Fetched: false after Fetch")
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 || entries[0].Name() != "kafka-4.3.1" {
		t.Errorf("cache holds %v, want only kafka-4.3.1", entries)
	}
}

func TestJarVersion(t *testing.T) {
	for _, tc := range []struct {
		name, prefix, want string
		ok                 bool
	}{
		{"log4j-core-2.24.3.jar", "log4j-core-", "2.24.3", true},
		{"slf4j-api-2.0.17.jar", "slf4j-api-", "2.0.17", true},
		{"log4j-core-test-2.24.3.jar", "log4j-core-", "", false},
		{"log4j-core-2.24.3.pom", "log4j-core-", "", false},
	} {
		got, ok := jarVersion(tc.name, tc.prefix)
		if got != tc.want || ok != tc.ok {
			t.Errorf("jarVersion(%q, %q) = %q, %v; want %q, %v", tc.name, tc.prefix, got, ok, tc.want, tc.ok)
		}
	}
}
