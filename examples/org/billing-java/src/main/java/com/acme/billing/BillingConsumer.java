package com.acme.billing;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

public class BillingConsumer {
    private static final String GROUP = "GID_ORDER_EVENTS";
    private static final String TOPIC = "TOPIC_ORDER";

    public static void main(String[] args) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(GROUP);
        consumer.setNamesrvAddr("namesrv.prod:9876");
        consumer.subscribe(TOPIC, "created||refunded");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) ->
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        consumer.start();

        DefaultMQPushConsumer ledger = new DefaultMQPushConsumer("GID_LEDGER");
        ledger.setNamesrvAddr("namesrv.prod:9876");
        ledger.subscribe("TOPIC_PAYMENT", "paid||refunded");
        ledger.setMessageModel(MessageModel.CLUSTERING);
        ledger.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) ->
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        ledger.start();

        DefaultMQPushConsumer risk = new DefaultMQPushConsumer("GID_RISK");
        risk.setNamesrvAddr("namesrv.prod:9876");
        risk.subscribe("TOPIC_PAYMENT", MessageSelector.bySql("amount > 1000 AND (region = 'eu'"));
        risk.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) ->
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        risk.start();

        DefaultMQPushConsumer bad = new DefaultMQPushConsumer("GID BAD NAME");
        bad.setNamesrvAddr("namesrv.prod:9876");
        bad.subscribe("TOPIC_PAYMENT", "*");
        bad.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) ->
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        bad.start();
    }
}
