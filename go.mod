module github.com/kcheck/kcheck

go 1.26
