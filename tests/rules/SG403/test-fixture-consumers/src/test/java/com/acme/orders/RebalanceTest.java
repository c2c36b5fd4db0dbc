package com.acme.orders;

import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.impl.consumer.DefaultLitePullConsumerImpl;
import org.apache.rocketmq.client.impl.consumer.DefaultMQPushConsumerImpl;
import org.junit.Test;

// Consumers a unit test builds without a group and never starts: fixtures handed to mocks or to the
// code under test. The client's default group (DEFAULT_CONSUMER) is reserved, but nothing starts them,
// and whoever would start one could set its group first: the group is unknown, not the reserved name.
public class RebalanceTest {
    private final DefaultMQPushConsumerImpl impl = mock(DefaultMQPushConsumerImpl.class);
    // ok: SG403
    private final DefaultMQPushConsumer consumer = new DefaultMQPushConsumer();
    // ok: SG403
    private final DefaultLitePullConsumerImpl lite = new DefaultLitePullConsumerImpl(new DefaultLitePullConsumer(), null);

    public RebalanceTest() {
        when(impl.getDefaultMQPushConsumer()).thenReturn(consumer);
    }

    @Test
    public void computesPullFromWhere() {
        consumer.setPullBatchSize(32);
    }
}
