package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrNoMaven is returned, wrapped, by Fetch when mvn is not on PATH.
var ErrNoMaven = errors.New("mvn not found")

// ErrNoJava is returned, wrapped, when no java executable can be found.
var ErrNoJava = errors.New("java not found")

// ErrMaven is returned, wrapped, by Fetch when mvn ran and failed, for
// instance because Maven Central has no such version or cannot be reached.
var ErrMaven = errors.New("mvn failed")

// completeFile, in a version's cache directory, lists the jars of a complete
// fetch, one per line. It is written last: a directory without it is a fetch
// that did not finish.
const completeFile = "complete"

// DefaultCache returns the download cache shared with kcheck's other
// downloads: $KCHECK_CACHE, or ~/.cache/kcheck.
func DefaultCache() (string, error) {
	if d := os.Getenv("KCHECK_CACHE"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("kafka: no download cache: set KCHECK_CACHE: %w", err)
	}
	return filepath.Join(home, ".cache", "kcheck"), nil
}

var versionRE = regexp.MustCompile(`^([0-9]+)\.([0-9]+)\.([0-9]+)(-[0-9A-Za-z.]+)?$`)

// Fetch makes Kafka version available in cache (DefaultCache if empty) and
// returns the classpath that runs it. The first call for a version runs mvn
// to copy org.apache.kafka:kafka_2.13:<version>, its runtime dependencies
// and the binding of slf4j to its logging (log4j2 from 4.0, log4j 1 or
// reload4j before) into <cache>/kafka-<version>/libs; later
// calls find the complete copy there and run nothing. Concurrent calls, even
// from several processes, are safe: each fetches into a directory of its own
// and renames it into place.
//
// The errors wrap ErrNoMaven, ErrNoJava, or ErrMaven with the command that
// failed and the end of its output.
func Fetch(ctx context.Context, version, cache string) (classpath string, err error) {
	rel, err := parseRelease(version)
	if err != nil {
		return "", err
	}
	if cache == "" {
		if cache, err = DefaultCache(); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(cache, "kafka-"+version)
	if complete(dir) {
		return libsClasspath(dir), nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("kafka: fetching Kafka %s: %w: install Maven (apt-get install maven), which fetches Kafka from Maven Central", version, ErrNoMaven)
	}
	if os.Getenv("JAVA_HOME") == "" {
		if _, err := exec.LookPath("java"); err != nil {
			return "", fmt.Errorf("kafka: fetching Kafka %s: %w: Maven and Kafka need a Java runtime, 17 or later (apt-get install openjdk-17-jre-headless)", version, ErrNoJava)
		}
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("kafka: download cache: %w", err)
	}
	tmp, err := os.MkdirTemp(cache, "kafka-"+version+".partial-")
	if err != nil {
		return "", fmt.Errorf("kafka: download cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := fetchInto(ctx, mvn, rel, tmp); err != nil {
		return "", err
	}
	if complete(dir) { // another fetch finished first
		return libsClasspath(dir), nil
	}
	// dir, if present, is an earlier fetch that did not finish.
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("kafka: removing an incomplete fetch: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if complete(dir) {
			return libsClasspath(dir), nil
		}
		return "", fmt.Errorf("kafka: download cache: %w", err)
	}
	return libsClasspath(dir), nil
}

// Fetched reports whether version is complete in cache (DefaultCache if
// empty), so that Fetch would run nothing.
func Fetched(version, cache string) bool {
	if checkVersion(version) != nil {
		return false
	}
	if cache == "" {
		var err error
		if cache, err = DefaultCache(); err != nil {
			return false
		}
	}
	return complete(filepath.Join(cache, "kafka-"+version))
}

func libsClasspath(dir string) string { return filepath.Join(dir, "libs", "*") }

// complete reports whether dir holds a finished fetch: its list of jars, each
// present and not empty.
func complete(dir string) bool {
	list, err := os.ReadFile(filepath.Join(dir, completeFile))
	if err != nil {
		return false
	}
	names := strings.Fields(string(list))
	if len(names) == 0 {
		return false
	}
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, "libs", name))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
			return false
		}
	}
	return true
}

// pom is a project with one dependency (group, artifact, version), for mvn
// dependency:copy-dependencies to copy it and its runtime dependencies.
const pom = `<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by kcheck (package kafka) to fetch Kafka's jars with mvn. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kcheck</groupId>
  <artifactId>kafka-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>%s</groupId>
      <artifactId>%s</artifactId>
      <version>%s</version>
    </dependency>
  </dependencies>
</project>
`

// fetchInto runs mvn to fill dir/libs and writes dir/complete.
func fetchInto(ctx context.Context, mvn string, rel release, dir string) error {
	libs := filepath.Join(dir, "libs")
	// -U retries what an earlier failed attempt left marked as missing in
	// ~/.m2; -C fails on a checksum mismatch instead of warning.
	copyDeps := func(pomName, group, artifact, version string) error {
		pomPath := filepath.Join(dir, pomName)
		if err := os.WriteFile(pomPath, fmt.Appendf(nil, pom, group, artifact, version), 0o644); err != nil {
			return fmt.Errorf("kafka: %w", err)
		}
		return runMaven(ctx, mvn, dir, group+":"+artifact+":"+version,
			"-B", "-q", "-U", "-C", "-Dstyle.color=never", "-f", pomPath,
			"dependency:copy-dependencies", "-DincludeScope=runtime", "-DoutputDirectory="+libs)
	}
	if err := copyDeps("pom.xml", "org.apache.kafka", "kafka_2.13", rel.version); err != nil {
		return err
	}
	// The server logs through slf4j; the binding to its logging library is
	// not among its runtime dependencies (Kafka's distribution adds it).
	// Fetch the one matching the slf4j it uses, and what the binding needs.
	log4j, slf4j := "", ""
	entries, err := os.ReadDir(libs)
	if err != nil {
		return fmt.Errorf("kafka: mvn fetched nothing: %w", err)
	}
	for _, e := range entries {
		if v, ok := jarVersion(e.Name(), "log4j-core-"); ok {
			log4j = v
		}
		if v, ok := jarVersion(e.Name(), "slf4j-api-"); ok {
			slf4j = v
		}
	}
	group, binding, version := "", "", ""
	switch {
	case slf4j == "":
		return fmt.Errorf("kafka: Kafka %s does not depend on slf4j-api: kcheck cannot configure its logging", rel.version)
	case !rel.log4j1 && log4j == "":
		return fmt.Errorf("kafka: Kafka %s does not depend on log4j-core: kcheck cannot configure its logging", rel.version)
	case !rel.log4j1:
		group, binding, version = "org.apache.logging.log4j", "log4j-slf4j2-impl", log4j // slf4j 2.x
		if strings.HasPrefix(slf4j, "1.") {
			binding = "log4j-slf4j-impl"
		}
	default:
		// Kafka 3.x ships slf4j-reload4j (slf4j 1.7.34 and later), 2.8
		// slf4j-log4j12 and log4j 1.2.17; either brings its library along.
		group, binding, version = "org.slf4j", "slf4j-reload4j", slf4j
		if !reload4jBinding(slf4j) {
			binding = "slf4j-log4j12"
		}
	}
	artifact := group + ":" + binding + ":" + version
	if rel.log4j1 {
		err = copyDeps("logging.xml", group, binding, version)
	} else {
		// The binding alone: its dependencies are Kafka's already.
		err = runMaven(ctx, mvn, dir, artifact, "-B", "-q", "-U", "-C", "-Dstyle.color=never", "-f", filepath.Join(dir, "pom.xml"),
			"dependency:copy", "-Dartifact="+artifact, "-DoutputDirectory="+libs)
	}
	if err != nil {
		return err
	}

	if entries, err = os.ReadDir(libs); err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	var names []string
	apis := 0
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jar") {
			names = append(names, e.Name())
		}
		if _, ok := jarVersion(e.Name(), "slf4j-api-"); ok {
			apis++
		}
	}
	if apis != 1 {
		return fmt.Errorf("kafka: Kafka %s with %s: %d versions of slf4j-api in %s, want one", rel.version, artifact, apis, libs)
	}
	list := strings.Join(names, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, completeFile), []byte(list), 0o644); err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	return nil
}

// reload4jBinding reports whether slf4j version v has slf4j-reload4j:
// 1.7.34 and later 1.7.x.
func reload4jBinding(v string) bool {
	rest, ok := strings.CutPrefix(v, "1.7.")
	if !ok {
		return !strings.HasPrefix(v, "1.")
	}
	n, err := strconv.Atoi(rest)
	return err == nil && n >= 34
}

// jarVersion returns the version in name if it is prefix<version>.jar.
func jarVersion(name, prefix string) (string, bool) {
	v, ok := strings.CutPrefix(name, prefix)
	if !ok || !strings.HasSuffix(v, ".jar") {
		return "", false
	}
	v = strings.TrimSuffix(v, ".jar")
	if v == "" || v[0] < '0' || v[0] > '9' {
		return "", false
	}
	return v, true
}

// runMaven runs mvn with args in dir. Its error names the artifact, shows the
// command and the end of what mvn printed.
func runMaven(ctx context.Context, mvn, dir, artifact string, args ...string) error {
	cmd := exec.CommandContext(ctx, mvn, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("kafka: fetching %s: %w", artifact, ctx.Err())
		}
		return fmt.Errorf("kafka: %w: Maven could not fetch %s (%v)\n  command: %s\n  in %s (removed since)\n%s\n  to retry by hand: mvn dependency:get -Dartifact=%s",
			ErrMaven, artifact, err, strings.Join(cmd.Args, " "), dir, indent(mavenTail(out.String(), 15)), artifact)
	}
	return nil
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// mavenTail returns the last n lines of Maven's output that say something:
// without colour codes and Maven's closing advice.
func mavenTail(out string, n int) []string {
	var lines []string
	for _, l := range strings.Split(ansi.ReplaceAllString(out, ""), "\n") {
		l = strings.TrimRight(l, " \r")
		body := strings.TrimSpace(strings.TrimPrefix(l, "[ERROR]"))
		switch {
		case body == "",
			strings.HasPrefix(body, "To see the full stack trace"),
			strings.HasPrefix(body, "Re-run Maven using"),
			strings.HasPrefix(body, "For more information about the errors"),
			strings.HasPrefix(body, "[Help "):
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		lines = []string{"(mvn printed nothing)"}
	}
	return lines
}

// indent prefixes each line, to set output of another program apart in an
// error message.
func indent(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  | ")
		b.WriteString(l)
	}
	return b.String()
}
