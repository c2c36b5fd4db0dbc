package com.acme.bench;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;

// shaped like apache/rocketmq example/benchmark/Consumer.java: a command-line flag picks one subscription
public class Consumer {
    public static void main(String[] args) throws Exception {
        String filterType = args.length > 0 ? args[0] : null;
        String expression = args.length > 1 ? args[1] : null;
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("benchmark_consumer");
        if (filterType == null || expression == null) {
            // ok: SG107
            consumer.subscribe("BenchmarkTest", "*");
        } else {
            if ("TAG".equals(filterType)) {
                // ok: SG107
                consumer.subscribe("BenchmarkTest", MessageSelector.byTag(expression));
            } else if ("SQL".equals(filterType)) {
                // ok: SG107
                consumer.subscribe("BenchmarkTest", MessageSelector.bySql(expression));
            }
        }
        consumer.start();

        DefaultMQPushConsumer orders = new DefaultMQPushConsumer("orders_consumer");
        if (args.length > 2) {
            // ok: SG107
            orders.subscribe("Orders", "created");
        } else {
            // ok: SG107
            orders.subscribe("Orders", "paid");
        }
        orders.start();

        DefaultMQPushConsumer audit = new DefaultMQPushConsumer("audit_consumer");
        switch (filterType) {
            case "TAG":
                // ruleid: SG107
                audit.subscribe("AuditTopic", "created");
                break;
            default:
                // ruleid: SG107
                audit.subscribe("AuditTopic", "paid");
        }
        // ok: SG107
        audit.subscribe("AuditTopic", "refunded");
        audit.start();
    }
}
