// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Client is a JVM application that calls a gateway by its name, as users' Java
// services do: one java.net.http.HttpClient (HTTP/1.1, its connection pool kept
// alive), shared by worker threads that each send a request every interval. Names
// resolve through the JVM's own address cache (the security property
// networkaddress.cache.ttl: 30 s by default, -1 for ever), which sits in front of
// whatever the platform resolves; package clients (JVMFleet) points the JVM at a
// hosts file that follows the gateway's DNS (jdk.net.hosts.file).
//
// Each request has 15 s, as clients.RequestTimeout. A request that fails on a
// connection error, or meets the gateway with no route for
// the name (an answer without X-Served-By), is retried once, on the client's own
// terms: a new connection resolves the name through the JVM's cache again.
//
// It prints its counts as one JSON object a line, every 250 ms and once more when it
// stops (its standard input closes): served, retried, failed, the answers by cluster,
// the cluster that answered each worker's last request ("" when it failed), and the
// first few failures and retried first attempts.
//
// Usage: java Client.java <host> <port> <workers> <everyMillis> <cacheTTL> <seed>

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Security;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

public class Client {
    static final String SERVED_BY = "X-Served-By";
    static final int MAX_SAMPLES = 5;

    static final AtomicLong served = new AtomicLong(), retried = new AtomicLong(), failed = new AtomicLong();
    static final Map<String, LongAdder> byCluster = new ConcurrentHashMap<>();
    static final List<String> samples = new ArrayList<>(), retrySamples = new ArrayList<>();
    static volatile boolean stopping;

    // Unrouted is the gateway's own answer: no backend served the request.
    static final class Unrouted extends Exception {
        Unrouted(String status) {
            super("answered " + status + " with no route to a backend");
        }
    }

    // BackendError is an error status from a backend: a failed request, not retried.
    static final class BackendError extends Exception {
        BackendError(String status, String cluster) {
            super("answered " + status + " from the backend of " + cluster);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: java Client.java <host> <port> <workers> <everyMillis> <cacheTTL> <seed>");
            System.exit(2);
        }
        String host = args[0];
        int port = Integer.parseInt(args[1]), workers = Integer.parseInt(args[2]);
        long every = Long.parseLong(args[3]);
        // Before the first lookup: the JVM reads the policy once.
        Security.setProperty("networkaddress.cache.ttl", args[4]);
        Security.setProperty("networkaddress.cache.negative.ttl", "0");
        Random rng = new Random(Long.parseLong(args[5]));

        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(15))
                .build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/"))
                .timeout(Duration.ofSeconds(15))
                .GET()
                .build();
        AtomicReferenceArray<String> last = new AtomicReferenceArray<>(workers);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            int id = i;
            long offset = (long) (rng.nextDouble() * every);
            Thread t = new Thread(() -> work(http, request, id, every, offset, last), "worker-" + i);
            t.start();
            threads.add(t);
        }
        Thread reporter = new Thread(() -> {
            while (!stopping) {
                System.out.println(report(last, false));
                try {
                    Thread.sleep(250);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "reporter");
        reporter.setDaemon(true);
        reporter.start();

        // Until the standard input closes.
        while (System.in.read() != -1) {
        }
        stopping = true;
        for (Thread t : threads) {
            t.join();
        }
        System.out.println(report(last, true));
        System.out.flush();
    }

    static void work(HttpClient http, HttpRequest request, int id, long every, long offset, AtomicReferenceArray<String> last) {
        long next = System.currentTimeMillis() + offset;
        while (!stopping) {
            long wait = next - System.currentTimeMillis();
            if (wait > 0) {
                try {
                    Thread.sleep(Math.min(wait, 100));
                } catch (InterruptedException e) {
                    return;
                }
                continue;
            }
            next += every;
            String cluster;
            try {
                cluster = send(http, request);
                served.incrementAndGet();
            } catch (BackendError e) {
                fail("worker " + id + ": " + e.getMessage());
                last.set(id, "");
                continue;
            } catch (Exception first) {
                synchronized (retrySamples) {
                    if (retrySamples.size() < MAX_SAMPLES) {
                        retrySamples.add(java.time.LocalTime.now() + " worker " + id + ": " + describe(first));
                    }
                }
                try {
                    cluster = send(http, request);
                    retried.incrementAndGet();
                } catch (Exception e) {
                    fail("worker " + id + ": " + describe(first) + "; retried: " + describe(e));
                    last.set(id, "");
                    continue;
                }
            }
            byCluster.computeIfAbsent(cluster, k -> new LongAdder()).increment();
            last.set(id, cluster);
        }
    }

    static String send(HttpClient http, HttpRequest request) throws IOException, InterruptedException, Unrouted, BackendError {
        HttpResponse<Void> resp = http.send(request, HttpResponse.BodyHandlers.discarding());
        String cluster = resp.headers().firstValue(SERVED_BY).orElse("");
        if (cluster.isEmpty()) {
            throw new Unrouted(Integer.toString(resp.statusCode()));
        }
        if (resp.statusCode() != 200) {
            throw new BackendError(Integer.toString(resp.statusCode()), cluster);
        }
        return cluster;
    }

    static String describe(Exception e) {
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    static void fail(String why) {
        failed.incrementAndGet();
        synchronized (samples) {
            if (samples.size() < MAX_SAMPLES) {
                samples.add(why);
            }
        }
    }

    static String report(AtomicReferenceArray<String> last, boolean done) {
        StringBuilder b = new StringBuilder("{\"served\":").append(served.get())
                .append(",\"retried\":").append(retried.get())
                .append(",\"failed\":").append(failed.get())
                .append(",\"done\":").append(done)
                .append(",\"byCluster\":{");
        String sep = "";
        for (Map.Entry<String, LongAdder> e : byCluster.entrySet()) {
            b.append(sep).append(quote(e.getKey())).append(':').append(e.getValue().sum());
            sep = ",";
        }
        b.append("},\"last\":[");
        for (int i = 0; i < last.length(); i++) {
            String c = last.get(i);
            b.append(i > 0 ? "," : "").append(c == null ? "\"\"" : quote(c));
        }
        b.append("],\"samples\":");
        list(b, samples);
        b.append(",\"retrySamples\":");
        list(b, retrySamples);
        return b.append("}").toString();
    }

    static void list(StringBuilder b, List<String> l) {
        b.append('[');
        synchronized (l) {
            for (int i = 0; i < l.size(); i++) {
                b.append(i > 0 ? "," : "").append(quote(l.get(i)));
            }
        }
        b.append(']');
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
