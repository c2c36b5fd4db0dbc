package com.acme.billing;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

/** A second ledger consumer in the same group: tags in another order, broadcasting. */
public class LedgerReplica {
    public static void start() throws Exception {
        DefaultMQPushConsumer replica = new DefaultMQPushConsumer("GID_LEDGER");
        replica.setNamesrvAddr("namesrv.prod:9876");
        replica.subscribe("TOPIC_PAYMENT", "refunded||paid");
        replica.setMessageModel(MessageModel.BROADCASTING);
        replica.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) ->
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        replica.start();
    }
}
