package scenario

import (
	"os"
	"slices"
	"strings"
	"testing"
)

const seedGapCfg = `\* SeedGap: see expect.tsv and README.md.
SPECIFICATION Spec
CONSTANTS
    Partitions = {p1}
    ConnOf <- OneConnection
    MaxInFlight = 5
    FirstAckRule = FALSE
    NoStateRule = "v45"
    PreWritten = TRUE
    ErrorsBeforeAppend = {"NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS"}
INVARIANTS TypeOK NoDuplicate
    NoGap
PROPERTY EventuallyAcked
`

func TestCfg(t *testing.T) {
	c, err := parseCfg(seedGapCfg, "SeedGap.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.invariants, []string{"TypeOK", "NoDuplicate", "NoGap"}) || !slices.Equal(c.properties, []string{"EventuallyAcked"}) {
		t.Errorf("invariants %q, properties %q", c.invariants, c.properties)
	}
	if c.get("ErrorsBeforeAppend") != `{"NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS"}` || c.get("ConnOf") != "OneConnection" {
		t.Errorf("constants %+v", c.constants)
	}
	got := c.with(Constant{"FirstAckRule", "TRUE"}, Constant{"HandBackOnError", "TRUE"}).checking([]string{"TypeOK", "NoGap"}, nil).text("a comment")
	want := `\* a comment
SPECIFICATION Spec
CONSTANTS
    Partitions = {p1}
    ConnOf <- OneConnection
    MaxInFlight = 5
    FirstAckRule = TRUE
    NoStateRule = "v45"
    PreWritten = TRUE
    ErrorsBeforeAppend = {"NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS"}
    HandBackOnError = TRUE
INVARIANTS TypeOK NoGap
`
	if got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	if c.get("FirstAckRule") != "FALSE" {
		t.Errorf("with changed its source")
	}
	// The text of a configuration reads back as the same configuration.
	again, err := parseCfg(c.text(""), "again")
	if err != nil || again.text("") != c.text("") {
		t.Errorf("parseCfg(text): %v\n%s", err, again.text(""))
	}
}

func TestCfgErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"SPECIFICATION Spec\nINIT Init\n", `c.cfg:2: "INIT": scenario derivation supports SPECIFICATION, CONSTANTS, INVARIANTS and PROPERTY only`},
		{"SPECIFICATION Spec\nCONSTANTS\n  N 3\n", `c.cfg:3: "N 3": want one constant a line, Name = value or Name <- Op`},
		{"SPECIFICATION Spec\nCONSTANTS\n  N = 3\n  N = 4\n", `c.cfg:4: constant N assigned twice`},
		{"CONSTANTS\n  N = 3\n", `c.cfg: no SPECIFICATION`},
		{"Spec\n", `c.cfg:1: "Spec" outside any section`},
		{"SPECIFICATION Spec\n(* x *)\n", `c.cfg:2: block comments are not supported here`},
		{"SPECIFICATION Spec\nINVARIANTS a-b\n", `c.cfg: "a-b" is not an operator name`},
	}
	for _, tt := range tests {
		if _, err := parseCfg(tt.text, "c.cfg"); err == nil || err.Error() != tt.want {
			t.Errorf("parseCfg(%q): %v, want %s", tt.text, err, tt.want)
		}
	}
}

// The constants of the spec itself, and the families they model.
func TestModuleConstants(t *testing.T) {
	text, err := os.ReadFile("../spec/IdempotentProducer.tla")
	if err != nil {
		t.Fatal(err)
	}
	got := moduleConstants(string(text))
	for _, want := range []string{"Partitions", "ConnOf", "NumBatches", "MaxInFlight", "FirstAckRule", "HoldWhileRetrying", "NoStateRule", "PreWritten", "AppResends"} {
		if !slices.Contains(got, want) {
			t.Errorf("constants %q lack %s", got, want)
		}
	}
	if slices.Contains(got, "Fatal") || slices.Contains(got, "NoState") {
		t.Errorf("constants %q hold a definition", got)
	}
	small := "CONSTANT A, B(_) \\* b\n(* CONSTANT Z *)\nCONSTANTS\n  C,   \\* c, d\n  D\n\nE == 1\n"
	if got := moduleConstants(small); !slices.Equal(got, []string{"A", "B", "C", "D"}) {
		t.Errorf("moduleConstants = %q", got)
	}
}

func TestFamilies(t *testing.T) {
	declared := []string{"FirstAckRule", "HoldWhileRetrying", "MaxInFlight", "NoStateRule", "PreWritten"}
	withRules := append(slices.Clone(declared), "HandBackOnError", "ImplicitAck", "PipelineAfterOk", "AppSerial", "RearmAfterIdle", "BumpRule", "LateAnswerFails")
	show := func(cs []Constant) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.Name+"="+c.Value)
		}
		return strings.Join(s, " ")
	}
	tests := []struct {
		family   string
		declared []string
		want     string // "" when not modelled
	}{
		{"ours", declared, ""}, // RearmAfterIdle
		{"ours-norearm", declared, ""},
		{"java", declared, ""}, // LateAnswerFails
		{"ours-off", declared, `FirstAckRule=FALSE HoldWhileRetrying=FALSE MaxInFlight=5 NoStateRule="v25to44" PreWritten=FALSE`},
		{"kgo", declared, ""},
		{"one-in-flight", declared, ""}, // BumpRule
		{"kafkajs", declared, ""},
		{"librdkafka", declared, ""},
		{"sarama", declared, ""},
		{"aiokafka", declared, ""},
		// Once the spec declares the rules, every family sets them.
		{"ours", withRules, `HandBackOnError=FALSE ImplicitAck=FALSE PipelineAfterOk=FALSE AppSerial=FALSE BumpRule="java" LateAnswerFails=FALSE FirstAckRule=TRUE HoldWhileRetrying=TRUE RearmAfterIdle=TRUE MaxInFlight=5 NoStateRule="v25to44" PreWritten=FALSE`},
		{"ours-norearm", withRules, `HandBackOnError=FALSE ImplicitAck=FALSE PipelineAfterOk=FALSE AppSerial=FALSE BumpRule="java" LateAnswerFails=FALSE FirstAckRule=TRUE HoldWhileRetrying=TRUE RearmAfterIdle=FALSE MaxInFlight=5 NoStateRule="v25to44" PreWritten=FALSE`},
		{"kgo", withRules, `HandBackOnError=FALSE ImplicitAck=FALSE AppSerial=FALSE RearmAfterIdle=FALSE LateAnswerFails=FALSE FirstAckRule=FALSE HoldWhileRetrying=FALSE PipelineAfterOk=TRUE BumpRule="pin" MaxInFlight=5 NoStateRule="v25to44" PreWritten=FALSE`},
		{"java", withRules, `HandBackOnError=FALSE ImplicitAck=FALSE PipelineAfterOk=FALSE AppSerial=FALSE RearmAfterIdle=FALSE BumpRule="java" FirstAckRule=FALSE HoldWhileRetrying=FALSE LateAnswerFails=TRUE MaxInFlight=5 NoStateRule="v25to44" PreWritten=FALSE`},
		{"kafkajs", withRules, `ImplicitAck=FALSE PipelineAfterOk=FALSE AppSerial=FALSE RearmAfterIdle=FALSE BumpRule="java" LateAnswerFails=FALSE FirstAckRule=FALSE HoldWhileRetrying=FALSE HandBackOnError=TRUE MaxInFlight=1 NoStateRule="v25to44" PreWritten=FALSE`},
		{"sarama", withRules, `HandBackOnError=FALSE ImplicitAck=FALSE PipelineAfterOk=FALSE AppSerial=FALSE RearmAfterIdle=FALSE LateAnswerFails=FALSE FirstAckRule=FALSE HoldWhileRetrying=FALSE BumpRule="failbump" MaxInFlight=1 NoStateRule="v25to44" PreWritten=FALSE`},
		{"one-in-flight", withRules, `HandBackOnError=FALSE ImplicitAck=FALSE PipelineAfterOk=FALSE AppSerial=FALSE RearmAfterIdle=FALSE LateAnswerFails=FALSE FirstAckRule=FALSE HoldWhileRetrying=FALSE BumpRule="renew" MaxInFlight=1 NoStateRule="v25to44" PreWritten=FALSE`},
		{"aiokafka", withRules, `HandBackOnError=FALSE ImplicitAck=FALSE PipelineAfterOk=FALSE AppSerial=FALSE RearmAfterIdle=FALSE LateAnswerFails=FALSE FirstAckRule=FALSE HoldWhileRetrying=FALSE BumpRule="none" MaxInFlight=1 NoStateRule="v25to44" PreWritten=FALSE`},
		{"librdkafka", withRules, `HandBackOnError=FALSE PipelineAfterOk=FALSE AppSerial=FALSE RearmAfterIdle=FALSE LateAnswerFails=FALSE FirstAckRule=FALSE HoldWhileRetrying=FALSE ImplicitAck=TRUE BumpRule="drain" MaxInFlight=5 NoStateRule="v25to44" PreWritten=FALSE`},
	}
	for _, tt := range tests {
		f, _ := family(tt.family)
		set, ok := familyConstants(f, tt.declared)
		if got := show(set); ok != (tt.want != "") || got != tt.want {
			t.Errorf("%s with %q: %s (%v), want %s", tt.family, tt.declared, got, ok, tt.want)
		}
	}
	for client, want := range map[string]string{
		"ours-on": "ours", "ours-norearm": "ours-norearm", "ours-off": "ours-off", "java-4.3.1": "java", "java-4.4.0": "java", "kgo": "kgo",
		"sarama": "sarama", "aiokafka": "aiokafka", "kafka-python": "one-in-flight",
		"kafkajs": "kafkajs", "librdkafka": "librdkafka", "java-9": "",
	} {
		if got := FamilyOf(client); got != want {
			t.Errorf("FamilyOf(%q) = %q, want %q", client, got, want)
		}
	}
}

// A prediction on the tansu variant sets the family's rules and tansu's
// broker in place of Kafka's; kafka-python's renewal and producer-state
// expiry are not modelled there.
func TestVariantConstants(t *testing.T) {
	declared := []string{"FirstAckRule", "HoldWhileRetrying", "MaxInFlight", "NoStateRule", "PreWritten",
		"HandBackOnError", "ImplicitAck", "PipelineAfterOk", "AppSerial", "RearmAfterIdle", "BumpRule", "LateAnswerFails"}
	v, ok := VariantOf("tansu")
	if !ok {
		t.Fatal("no tansu variant")
	}
	java, _ := family("java")
	set, ok := variantConstants(java, v, declared, false)
	var got []string
	for _, c := range set {
		got = append(got, c.Name+"="+c.Value)
	}
	if want := `HandBackOnError=FALSE ImplicitAck=FALSE PipelineAfterOk=FALSE AppSerial=FALSE RearmAfterIdle=FALSE BumpRule="java" FirstAckRule=FALSE HoldWhileRetrying=FALSE LateAnswerFails=TRUE MaxInFlight=5 NoStateRule="tansu" PreWritten=FALSE`; !ok || strings.Join(got, " ") != want {
		t.Errorf("java on tansu: %s (%v), want %s", strings.Join(got, " "), ok, want)
	}
	if _, ok := variantConstants(java, v, declared, true); ok {
		t.Error("java on tansu with producer-state expiry: modelled")
	}
	kp, _ := family("one-in-flight")
	if _, ok := variantConstants(kp, v, declared, false); ok {
		t.Error("kafka-python on tansu: modelled")
	}
	if _, ok := VariantOf("kafka"); ok || !variantRule(`"tansu"`) || variantRule(`"v25to44"`) {
		t.Error("VariantOf or variantRule: Kafka taken for a variant, or tansu not")
	}
}

// A family that speaks TV2 is predicted under TV1 on a configuration whose
// cluster is at TV1 (it reads the cluster's transaction.version); a TV1
// family stays TV1 everywhere; the other constants are left alone.
func TestSpokenTV(t *testing.T) {
	tv := func(set []Constant) string {
		for _, c := range set {
			if c.Name == "TV" {
				return c.Value
			}
		}
		return ""
	}
	for _, f := range TxnFamilies {
		set, ok := familyConstants(f, []string{"TV", "FirstAckRule", "TxnBumpOnExpiry", "TxnBumpOnError", "ExpiryAborts", "EndTxnLost", "DeliveryTimeout", "MaxInFlight"})
		if !ok {
			t.Fatalf("%s: not modelled", f.Name)
		}
		if got := tv(spokenTV(set, `"TV1"`)); got != `"TV1"` {
			t.Errorf("%s on a TV1 cluster: TV %s", f.Name, got)
		}
		if got, want := tv(spokenTV(set, `"TV2"`)), tv(set); got != want {
			t.Errorf("%s on a TV2 cluster: TV %s, want its own %s", f.Name, got, want)
		}
		if l := spokenTV(set, `"TV1"`); len(l) != len(set) {
			t.Errorf("%s: %d constants, want %d", f.Name, len(l), len(set))
		}
	}
}
