package com.acme.orders;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

// Started without a group where its calls are read: it runs with the reserved default group and the
// client refuses it.
public class OrderConsumer {
    public void run() throws Exception {
        // ruleid: SG403
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer();
        consumer.subscribe("TopicOrders", "*");
        consumer.start();
    }
}
