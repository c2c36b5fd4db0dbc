package com.acme.orders;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.junit.Test;

// The first consumer exists only to be refused: the test expects its start() to throw. It never runs,
// so it is no member of GID_ORDERS, and the group's one running member has nothing to disagree with
// (no SG102, and the simulator, which sees the same members, predicts no loss: no SG905).
public class OrderConsumerTest {

    @Test(expected = IllegalStateException.class)
    public void refusedWhenMisconfigured() throws Exception {
        // ok: SG102, SG905
        DefaultMQPushConsumer refused = new DefaultMQPushConsumer("GID_ORDERS");
        refused.subscribe("TopicOrders", "created");
        refused.start();
    }

    @Test
    public void consumesPaidOrders() throws Exception {
        // ok: SG102, SG905
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("GID_ORDERS");
        consumer.subscribe("TopicOrders", "paid");
        consumer.start();
    }
}
