// Batch driver for Viper's Silicon, embedded in alpine-rs (src/verify/silicon/driver.rs) and
// compiled at install time against the pinned silicon.jar (nagini 1.2.0, Silicon 1.1-SNAPSHOT
// 3e24b7a8+).
//
// It keeps one JVM alive so that Silicon's class loading and JIT warm-up are paid once, not once per
// file, and verifies several files at a time in it, each with its own SiliconRunnerInstance (as
// ViperServer runs concurrent jobs in one JVM). Usage:
//
//   java -Xss256m -XX:+UseSerialGC [-Dalpine.workers=N] -cp silicon.jar:<dir> AlpineSilicon \
//        --z3Exe Z3 [silicon options]
//
// alpine.workers (default 1) is the number of requests verified at once; further requests wait in
// a queue. alpine-rs never sends more than that many at a time, so its wall-clock limits do not
// count queueing. Silicon keeps its options in a global (viper.silicon.verifier.Verifier.config)
// that every run sets: requests verified at once must share their options, timeout included
// (alpine-rs gives all requests of one JVM the same ones).
//
// Protocol (all fields separated by one TAB; messages are escaped, see esc()):
//
//   stdout at start:  READY
//   request (stdin):  VERIFY <id> <path.vpr> <timeout_s>        (timeout 0 = none)
//                     CANCEL <id>   stop that request: its Z3 processes are stopped, and it is
//                                   answered at once if it has not started (an answer still
//                                   comes, END CRASH or whatever Silicon made of the stop)
//                     QUIT   (or end of input: answers still due are written, then the JVM exits)
//   answer (stdout):  BEGIN <id>
//                     ERR   <id> <fullId> <pos> <reasonPos> <message>
//                     OTHER <id> <fullId> <pos> <message>
//                     END   <id> VERIFIED|FAILED|TIMEOUT|CRASH <ms>
//   a request line that is not one of the above is answered BAD <line>.
//
// Ids are chosen by the client and must be unique among the requests in flight. Answers come in
// the order the requests finish, not the order they were sent; each answer (BEGIN to END) is
// written as one block under a lock, so the lines of two answers never interleave.
//
// <pos> is "file@l.c--l.c", "file@l.c", or "?" when the node has no source position.
//
// Silicon's own reporter writes to System.out; that is redirected to stderr so that stdout carries
// only protocol lines.
//
// Test hook: with -Dalpine.testFaults=true (which only debug builds of alpine-rs pass, and only
// when $ALPINE_RS_TEST_DRIVER_FAULTS is set), a file whose text contains "alpine_test_halt" halts
// the whole JVM (as a JVM crash would), and one that contains "alpine_test_throw" throws a
// StackOverflowError inside its request. tests/verify_concurrency.rs uses them to check that one
// file's crash does not cost the others their verdicts.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.slf4j.LoggerFactory;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;
import viper.silicon.SiliconRunnerInstance;
import viper.silver.ast.AbstractSourcePosition;
import viper.silver.ast.HasLineColumn;
import viper.silver.ast.Position;
import viper.silver.verifier.AbortedExceptionally;
import viper.silver.verifier.AbstractError;
import viper.silver.verifier.Failure;
import viper.silver.verifier.TimeoutOccurred;
import viper.silver.verifier.VerificationError;
import viper.silver.verifier.VerificationResult;

public final class AlpineSilicon {
    private AlpineSilicon() {}

    /**
     * Stack of a worker thread: Silicon recurses over the program, as with -Xss256m on main (its
     * own verifier threads take -Xss). 32 MB overflowed on a method with some 300 generated
     * contract conjuncts (VerCors' veymont-global-programs/k-nucleotide-4.pvl); the stack is
     * reserved, not committed, so a large one costs nothing until it is used.
     */
    private static final long WORKER_STACK = 256L << 20;

    private static final boolean TEST_FAULTS = Boolean.getBoolean("alpine.testFaults");

    public static void main(String[] args) throws Exception {
        // Grab the real stdout before anything (Scala's Console, logback) captures System.out.
        PrintStream proto =
                new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);

        // Initialise logging now, on one thread: SLF4J hands threads that ask while it initialises
        // a stand-in factory, which Silver's ViperLogger fails to cast to logback's context.
        LoggerFactory.getILoggerFactory();
        List<String> baseArgs = Arrays.asList(args);
        int workers = Math.max(1, Integer.getInteger("alpine.workers", 1));
        // Daemon threads: a request stuck in Silicon must not keep the JVM alive after QUIT.
        ExecutorService pool = Executors.newFixedThreadPool(workers, r -> {
            Thread t = new Thread(null, r, "alpine-verify", WORKER_STACK);
            t.setDaemon(true);
            return t;
        });
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        proto.println("READY");

        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            if (f.length == 1 && f[0].equals("QUIT")) {
                break;
            }
            if (f.length == 2 && f[0].equals("CANCEL")) {
                cancel(f[1]);
                continue;
            }
            if (f.length != 4 || !f[0].equals("VERIFY")) {
                write(proto, "BAD\t" + esc(line) + "\n");
                continue;
            }
            pool.execute(() -> write(proto, verify(baseArgs, f[1], f[2], f[3])));
        }
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.DAYS);
        proto.flush();
        // Silicon may leave non-daemon threads behind; do not wait for them.
        System.exit(0);
    }

    /** The requests being verified, by id (CANCEL finds their runner here). */
    private static final ConcurrentHashMap<String, SiliconRunnerInstance> RUNNING =
            new ConcurrentHashMap<>();
    /** Requests cancelled before they started. */
    private static final Set<String> CANCELLED = ConcurrentHashMap.newKeySet();

    /** CANCEL: stop a running request's verifier (and so its Z3 processes), or mark a queued
     *  one so that it is answered without running. */
    private static void cancel(String id) {
        CANCELLED.add(id);
        SiliconRunnerInstance r = RUNNING.get(id);
        try {
            if (r != null && r.verifier() != null) {
                r.verifier().stop();
            }
        } catch (Throwable t) {
            // The request ends on its own; nothing else to do.
        }
    }

    /** Writes one answer as a whole, so that concurrent answers never interleave. */
    private static void write(PrintStream proto, String block) {
        synchronized (proto) {
            proto.print(block);
            proto.flush();
        }
    }

    /** Verifies one file; returns its whole answer, BEGIN to END, one line per record. */
    private static String verify(List<String> baseArgs, String id, String path, String timeout) {
        long t0 = System.nanoTime();
        StringBuilder out = new StringBuilder();
        out.append("BEGIN\t").append(id).append('\n');
        String status;
        SiliconRunnerInstance runner = null;
        try {
            if (TEST_FAULTS) {
                testFault(path);
            }
            // Inside the try: whatever goes wrong, the request gets its answer.
            if (CANCELLED.remove(id)) {
                throw new InterruptedException("cancelled before it started");
            }
            runner = new SiliconRunnerInstance();
            RUNNING.put(id, runner);
            List<String> a = new ArrayList<>(baseArgs);
            if (!timeout.equals("0")) {
                a.add("--timeout");
                a.add(timeout);
            }
            a.add(path);
            runner.execute(CollectionConverters.asScala(a).toList(), runner.execute$default$2());
            status = report(out, id, runner);
        } catch (Throwable t) {
            out.append("OTHER\t").append(id).append("\tdriver.exception\t?\t")
                    .append(esc(describe(t))).append('\n');
            status = "CRASH";
        } finally {
            RUNNING.remove(id);
            CANCELLED.remove(id);
            try {
                // Also stops the Z3 process(es) of this run.
                if (runner != null && runner.verifier() != null) {
                    runner.verifier().stop();
                }
            } catch (Throwable t) {
                // Nothing useful to do: the result has been recorded already.
            }
        }
        long ms = (System.nanoTime() - t0) / 1_000_000L;
        out.append("END\t").append(id).append('\t').append(status).append('\t').append(ms)
                .append('\n');
        return out.toString();
    }

    /** The test hook described at the top of this file. */
    private static void testFault(String path) throws Exception {
        String text = new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8);
        if (text.contains("alpine_test_halt")) {
            System.err.println("alpine test fault: halting the JVM");
            System.err.flush();
            Runtime.getRuntime().halt(70);
        }
        if (text.contains("alpine_test_throw")) {
            throw new StackOverflowError("alpine test fault");
        }
    }

    private static String report(StringBuilder out, String id, SiliconRunnerInstance runner) {
        // Parse and type errors are kept in errors(), with no verification result.
        List<AbstractError> errs = new ArrayList<>(CollectionConverters.asJava(runner.errors()));
        if (errs.isEmpty()) {
            Option<VerificationResult> r = runner.getVerificationResult();
            if (r.isEmpty()) {
                out.append("OTHER\t").append(id).append("\tdriver.noresult\t?\t")
                        .append(esc("Silicon produced no result (rejected options?)")).append('\n');
                return "CRASH";
            }
            VerificationResult res = r.get();
            if (!(res instanceof Failure)) {
                return "VERIFIED";
            }
            errs.addAll(CollectionConverters.asJava(((Failure) res).errors()));
        }
        boolean timeout = false;
        boolean aborted = false;
        for (AbstractError e : errs) {
            if (e instanceof VerificationError) {
                VerificationError ve = (VerificationError) e;
                String reasonPos = "?";
                try {
                    reasonPos = pos(ve.reason().pos());
                } catch (Throwable t) {
                    // Some reasons have no offending node; leave the position unknown.
                }
                out.append("ERR\t" + id + "\t" + esc(ve.fullId()) + "\t" + pos(ve.pos()) + "\t"
                        + reasonPos + "\t" + esc(ve.readableMessage(false, false))).append('\n');
            } else {
                timeout |= e instanceof TimeoutOccurred;
                aborted |= e instanceof AbortedExceptionally;
                out.append("OTHER\t" + id + "\t" + esc(e.fullId()) + "\t" + pos(e.pos()) + "\t"
                        + esc(e.readableMessage())).append('\n');
            }
        }
        if (timeout) {
            return "TIMEOUT";
        }
        return aborted ? "CRASH" : "FAILED";
    }

    private static String pos(Position p) {
        if (!(p instanceof AbstractSourcePosition)) {
            return "?";
        }
        AbstractSourcePosition sp = (AbstractSourcePosition) p;
        String file = sp.file() == null || sp.file().getFileName() == null
                ? "" : sp.file().getFileName().toString();
        StringBuilder b = new StringBuilder(esc(file)).append('@').append(lc(sp.start()));
        Option<HasLineColumn> end = sp.end();
        if (end.isDefined()) {
            b.append("--").append(lc(end.get()));
        }
        return b.toString();
    }

    private static String lc(HasLineColumn p) {
        return p.line() + "." + p.column();
    }

    private static String describe(Throwable t) {
        StringBuilder b = new StringBuilder(t.toString());
        StackTraceElement[] st = t.getStackTrace();
        for (int i = 0; i < Math.min(8, st.length); i++) {
            b.append("\n  at ").append(st[i]);
        }
        return b.toString();
    }

    // Keeps each protocol record on one line, and its fields free of TABs.
    private static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\': b.append("\\\\"); break;
                case '\t': b.append("\\t"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                default: b.append(c);
            }
        }
        return b.toString();
    }
}
