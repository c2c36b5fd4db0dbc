package com.acme.orders;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.failBecauseExceptionWasNotThrown;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.common.MixAll;
import org.junit.Test;

// Negative tests: each asserts that the client refuses the consumer at start(). The refusal is what
// the test checks, not a defect, so the consumer never runs and no rule judges it.
public class CheckConfigTest {

    @Test
    public void reservedGroupIsRefused() throws Exception {
        // ok: SG403
        DefaultLitePullConsumer reserved = new DefaultLitePullConsumer(MixAll.DEFAULT_CONSUMER_GROUP);
        try {
            reserved.start();
            failBecauseExceptionWasNotThrown(MQClientException.class);
        } catch (MQClientException e) {
            reserved.shutdown();
        }
    }

    @Test
    public void dottedGroupIsRefused() {
        // ok: SG403
        DefaultMQPushConsumer dotted = new DefaultMQPushConsumer("order.consumer");
        dotted.subscribe("TopicOrders", "*");
        assertThrows(MQClientException.class, () -> dotted.start());
    }

    @Test
    public void spacedGroupIsRefused() {
        // ok: SG403
        DefaultMQPushConsumer spaced = new DefaultMQPushConsumer("order consumer");
        assertThatThrownBy(spaced::start).isInstanceOf(MQClientException.class);
    }

    @Test(expected = MQClientException.class)
    public void blankGroupIsRefused() throws Exception {
        // ok: SG403
        DefaultMQPushConsumer blank = new DefaultMQPushConsumer(" ");
        blank.start();
    }
}
