# ranger_bench.R -- ranger's side of the forest benchmark.
#
# Reads the datasets and CV folds rf_bench wrote (NAME.bin, NAME.folds; see
# bench/rf_bench.c) and prints rf_bench's tab-separated result lines for a
# random forest (mtry = floor(p/3), bootstrap) and extremely randomized
# trees (splitrule "extratrees", one random split per feature, mtry = p, no
# bootstrap), 100 trees, min.node.size 5, num.threads 2, log target.
# Single-row latency: median of LAT_CALLS predict calls on one row with
# num.threads = 1.
#
# Usage: Rscript ranger_bench.R OUTDIR NAME
suppressWarnings(ok <- requireNamespace("ranger", quietly = TRUE))
if (!ok) {
  cat("SKIP\tranger\tthe R package ranger is not installed\n")
  quit(status = 0)
}
LAT_CALLS <- 100

load_bin <- function(d, name) {
  con <- file(sprintf("%s/%s.bin", d, name), "rb")
  hdr <- readBin(con, "integer", n = 4, size = 4, endian = "little")
  n <- hdr[1]; p <- hdr[3]
  x <- matrix(readBin(con, "double", n = n * p, size = 8, endian = "little"),
              nrow = n, ncol = p, byrow = TRUE)
  y <- readBin(con, "double", n = n, size = 8, endian = "little")
  close(con)
  colnames(x) <- paste0("x", seq_len(p) - 1)
  con <- file(sprintf("%s/%s.folds", d, name), "rb")
  folds <- readBin(con, "integer", n = n, size = 4, endian = "little")
  close(con)
  list(x = x, y = y, folds = folds)
}

fit <- function(kind, x, y, threads = 2) {
  p <- ncol(x)
  if (kind == "RF") {
    ranger::ranger(x = x, y = log(y), num.trees = 100, mtry = max(1, floor(p / 3)),
                   min.node.size = 5, replace = TRUE, sample.fraction = 1,
                   num.threads = threads, seed = 1, verbose = FALSE)
  } else {
    ranger::ranger(x = x, y = log(y), num.trees = 100, mtry = p, min.node.size = 5,
                   splitrule = "extratrees", num.random.splits = 1, replace = FALSE,
                   sample.fraction = 1, num.threads = threads, seed = 1, verbose = FALSE)
  }
}

args <- commandArgs(trailingOnly = TRUE)
d <- args[1]; name <- args[2]
D <- load_bin(d, name)
C <- if (name == "synth") load_bin(d, "synth_cv") else D
for (kind in c("RF", "ET")) {
  t0 <- Sys.time()
  m <- fit(kind, D$x, D$y)
  train <- as.numeric(Sys.time() - t0, units = "secs")
  t0 <- Sys.time()
  invisible(predict(m, D$x, num.threads = 2))
  rps <- nrow(D$x) / as.numeric(Sys.time() - t0, units = "secs")
  row <- D$x[1, , drop = FALSE]
  lat <- numeric(LAT_CALLS)
  for (i in seq_len(LAT_CALLS)) {
    t0 <- Sys.time()
    invisible(predict(m, row, num.threads = 1))
    lat[i] <- as.numeric(Sys.time() - t0, units = "secs")
  }
  pred <- numeric(length(C$y))
  for (k in 0:4) {
    te <- C$folds == k
    mk <- fit(kind, C$x[!te, , drop = FALSE], C$y[!te])
    pred[te] <- exp(predict(mk, C$x[te, , drop = FALSE], num.threads = 2)$predictions)
  }
  ape <- 100 * abs(pred - C$y) / abs(C$y)
  cat(sprintf("R\t%s\tranger\t%s\t%.3f\t%.2f\t%.2f\t%.2f\t%.0f\n", name, kind, train,
              median(ape), mean(ape), 1e6 * median(lat), rps))
}
