package mcs

// Workers is how many Services each of the per-Service controllers
// (export, publish, imports) handles at once. Their keys are Services, so
// workers never share one; with a single worker, a hundred Services
// exported together were imported one after the other (5-7 s for the
// last, against well under a second for a few).
const Workers = 4
