// Package matrix takes every client through every scenario on every broker:
// each cell is one run of a real client, unchanged, through kcheck proxy
// with a scenario's fault schedule, on a real Kafka broker. A cell records
// whether the client reached the scenario's dangerous state (reached.go),
// what happened to its records by its own read-back and by what it told
// its application, what the model predicts for the client's rules (on the
// spec's variant for a broker that follows other rules: tansu), and
// whether kcheck verify's verdict agrees with the read-back (judge.go).
// Results are a Markdown matrix and a JSON file (table.go), JUnit XML
// (junit.go) and a self-contained HTML page (html.go). The cells are
// independent: a matrix splits into shards that machines run apart, and
// whose results merge into the whole matrix's (shard.go). For a client's
// own CI, Quick chooses a few scenarios from the model's data (quick.go)
// and Cell.Gate judges the client rather than kcheck (gate.go). A client
// can be defined by a file, with the family whose rules it claims or none
// (clientdef.go); a client of no known family is shown every family's
// prediction and which it behaved like (like.go).
//
// In kcheck's data flow it sits after spec/scenarios (scenario.Derive) and
// drives kcheck proxy and kcheck verify, as bench/race.sh does for the
// seed's race.
package matrix
